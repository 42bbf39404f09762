import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ANSI, ESC, plain, runShell, shq, startOnTerminal, twoTenantSim, writeConfig } from '../helpers/operator.js';
import { tempDir } from '../helpers/sync-harness.js';

/** One tenant whose key may read 2 pages per 1.5 s, and a collection of many 20-record pages. */
async function slowTenant() {
  const { sim, a } = await twoTenantSim({ records: 40, maxLimit: 20 });
  const dir = tempDir();
  const config = writeConfig(dir, 'c.json', {
    baseUrl: sim.url,
    database: join(dir, 'm.db'),
    tenants: [{ slug: a.slug, apiKeyEnv: 'KEY_A', rateLimit: { reads: 2, writes: 20, windowMs: 1500 } }],
  });
  const total = sim.controls.docs(a.slug, 'event-instances').length;
  return { sim, a, dir, config, total, keys: { KEY_A: a.key } };
}

describe('progress that tells the truth', () => {
  it('on a terminal: records of totalDocs, rate, ETA and the wait for the read budget, and no JSON log lines', async () => {
    const t = await slowTenant();
    const run = startOnTerminal(['sync', '--config', t.config, '--collection', 'event-instances'], t.keys);
    const { code, text } = await run.done;
    expect(code).toBe(0);
    const shown = plain(text);
    const partial = [...shown.matchAll(new RegExp(`(\\d+)/${t.total} records`, 'g'))].map((m) => Number(m[1]));
    expect(partial.some((n) => n > 0 && n < t.total)).toBe(true);
    expect(shown).toMatch(/\d+(\.\d)?\/s {2}ETA \d+ s/);
    expect(shown).toMatch(/waiting \d+ s for the read budget/);
    expect(shown).toMatch(new RegExp(`${t.a.slug} event-instances`));
    expect(text).not.toMatch(/"level":/);
  });

  it('off a terminal: no progress at all, JSON log lines with ISO times and no field under two names', async () => {
    const t = await slowTenant();
    const r = await runShell(`$U sync --config ${shq(t.config)} --collection event-instances </dev/null`, {
      ...t.keys,
      LOG_LEVEL: 'debug',
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout + r.stderr).not.toContain('\r');
    expect(r.stdout + r.stderr).not.toContain(ESC);
    expect(r.stderr).not.toMatch(new RegExp(`\\d+/${t.total}`));
    const entries = r.stderr
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(entries.length).toBeGreaterThan(3);
    for (const e of entries) {
      expect(e.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      // The same text under two names (collection and name, say) is one field too many.
      const texts = Object.entries(e).filter(
        ([k, v]) => typeof v === 'string' && v.length >= 3 && !['msg', 'time'].includes(k),
      );
      expect(new Set(texts.map(([, v]) => v)).size, JSON.stringify(e)).toBe(texts.length);
    }
  });

  it('on a terminal, logs are pretty and coloured (pino-pretty), printed above the progress lines', async () => {
    const t = await slowTenant();
    const run = startOnTerminal(['sync', '--config', t.config, '--collection', 'series'], {
      ...t.keys,
      LOG_LEVEL: 'debug',
    });
    const { code, text } = await run.done;
    expect(code).toBe(0);
    expect(plain(text)).toMatch(/^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}\] (DEBUG| INFO): /m);
    // The level is a word of its own, colour and all (a colour code ends in "m": " INFO" keeps a boundary).
    expect(text).toMatch(/\bINFO\b/);
    expect(text).toMatch(new RegExp(`${ESC}\\[3\\dm(DEBUG| INFO)${ESC}\\[39m`));
    expect(text).not.toMatch(/"level":/);
    // Every log line starts a line of its own, at a fresh line or after the cursor went back to the line's start
    // and cleared it (what the progress display does): never spliced after a progress line's text.
    for (const m of text.matchAll(new RegExp(`((?:${ANSI})*)\\[\\d{4}-\\d\\d-\\d\\d `, 'g'))) {
      const before = text[(m.index ?? 0) - 1];
      const escapes = m[1] ?? '';
      const cleared = escapes.includes(`${ESC}[1G`) || escapes.includes(`${ESC}[2K`);
      expect(before === undefined || before === '\n' || cleared, text.slice(0, m.index)).toBe(true);
    }
  });
});
