import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { startSimulator } from '../../src/sim/start-simulator.js';
import { runCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/sync-harness.js';
import { startSync } from '../helpers/understudy-process.js';

// `sync --watch` needs no Redis: REDIS_URL is left out of the child's environment (an undefined value is not passed).
const NO_REDIS = { REDIS_URL: undefined };

/** A simulator with its real limits (100 reads a minute per key, pages of 100) and a config watching its first tenant. */
async function watchedTenant(watch: unknown = true) {
  const sim = await startSimulator({ port: 0, records: 40 });
  onTestFinished(() => sim.close());
  const t = sim.tenants[0];
  if (!t) throw new Error('simulator has no tenant');
  const dir = tempDir();
  const db = join(dir, 'mirror.db');
  const config = join(dir, 'config.json');
  writeFileSync(
    config,
    JSON.stringify({
      baseUrl: sim.url,
      database: db,
      watch,
      tenants: [{ slug: t.slug, apiKeyEnv: 'W_KEY', collections: ['events', 'series'] }],
    }),
  );
  const env = { ...NO_REDIS, W_KEY: t.key, LOG_LEVEL: 'warn' };
  /** The mirror's `updated_at` of a record, read the way a person with sqlite3 would. */
  const mirrored = (table: string, id: string): string | undefined => {
    const d = new Database(db, { readonly: true, fileMustExist: true });
    try {
      const row = d.prepare(`SELECT updated_at FROM ${table} WHERE tenant = ? AND id = ?`).get(t.slug, id) as
        | { updated_at: string }
        | undefined;
      return row?.updated_at;
    } finally {
      d.close();
    }
  };
  return { sim, tenant: t, config, env, mirrored };
}

describe('understudy sync --watch', () => {
  it('mirrors an upstream edit made after the first sync within 20 s, and SIGTERM ends it with exit 0', async () => {
    const { sim, tenant, config, env, mirrored } = await watchedTenant();
    const p = startSync(['--watch', '--config', config], env);
    await p.waitForLog(/watching 1 tenant/, 30_000);
    // The edit lands a little after the first sync, so only the watch can bring it.
    await sleep(3000);
    const { edited } = sim.controls.mutate({ tenant: tenant.slug, collection: 'events', edits: 1 });
    const id = edited[0] ?? '';
    const upstream = String(sim.controls.docs(tenant.slug, 'events').find((d) => String(d.id) === id)?.updatedAt);
    const editedAt = Date.now();
    await vi.waitFor(() => expect(Date.parse(mirrored('events', id) ?? '')).toBe(Date.parse(upstream)), {
      timeout: 20_000,
      interval: 200,
    });
    expect(Date.now() - editedAt).toBeLessThan(20_000);
    const stopAt = Date.now();
    const end = await p.stop('SIGTERM');
    expect(end.code, end.stderr).toBe(0);
    expect(Date.now() - stopAt).toBeLessThan(10_000);
    expect(sim.controls.counters().total.rateLimited).toBe(0);
    expect(end.stderr).not.toContain(tenant.key);
  }, 90_000);

  it('refuses a bad watch knob with exit 2 and one line naming watch.maxShare', async () => {
    const { config, env } = await watchedTenant({ maxShare: 2 });
    const r = await runCli(['sync', '--watch', '--config', config], { env });
    expect(r.code, r.stderr).toBe(2);
    const lines = r.stderr.split('\n').filter((l) => l.trim() !== '');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('watch.maxShare');
  });

  it('refuses --watch with --schedule as a usage error (exit 2)', async () => {
    const { config, env } = await watchedTenant();
    const r = await runCli(['sync', '--watch', '--schedule', '--config', config], { env });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/--watch/);
    expect(r.stderr).toMatch(/--schedule/);
  });
});
