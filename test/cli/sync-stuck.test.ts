import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { startSimulator } from '../../src/sim/start-simulator.js';
import { runCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/sync-harness.js';

describe('understudy sync against an upstream that answers the same page for ever', () => {
  it('exits 4 with one line naming the route, reports the error in --json, and syncs the other collections', async () => {
    const s = await startSimulator({ port: 0, records: 12, readLimit: 0, writeLimit: 0, maxLimit: 5, tenants: 1 });
    onTestFinished(() => s.close());
    const t = s.tenants[0];
    if (!t) throw new Error('no tenant');
    s.controls.injectFaults({ kind: 'stale-page', count: 1000, match: { path: 'event-instances' } });
    const db = join(tempDir(), 'm.db');
    const r = await runCli(
      ['sync', '--base-url', s.url, '--tenant', t.slug, '--db', db, '--json', '--collection', 'event-instances'],
      { env: { PARTNERS_API_KEY: t.key } },
    );
    expect(r.code, r.stderr).toBe(4);
    const lines = r.stderr.split('\n').filter((l) => l.startsWith('understudy sync:'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('/partners/{version}/{tenant}/event-instances');
    const out = JSON.parse(r.stdout);
    expect(out.tenants[0].collections[0].error).toMatch(/event-instances/);
    expect(s.controls.requestLog().filter((e) => e.path.includes('event-instances')).length).toBeLessThanOrEqual(3);

    const both = await runCli(
      [
        'sync',
        '--base-url',
        s.url,
        '--tenant',
        t.slug,
        '--db',
        db,
        '--json',
        '--collection',
        'event-instances',
        '--collection',
        'series',
      ],
      { env: { PARTNERS_API_KEY: t.key } },
    );
    expect(both.code).toBe(4);
    const series = JSON.parse(both.stdout).tenants[0].collections.find((c: { name: string }) => c.name === 'series');
    expect(series).toMatchObject({ inserted: s.controls.docs(t.slug, 'series').length });
    expect(series.error).toBeUndefined();
  });
});
