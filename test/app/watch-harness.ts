import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { expect, onTestFinished, vi } from 'vitest';
import type { RequestLogEntry } from '../../src/sim/start-simulator.js';
import { startSimulator } from '../../src/sim/start-simulator.js';
import { type CollectionSlug, tableFor } from '../../src/vocabulary/collections.js';
import { docKey } from '../../src/vocabulary/record-key.js';
import { pgQuery } from '../helpers/postgres.js';
import { runCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/sync-harness.js';
import { startWorker } from '../helpers/understudy-process.js';

/** The simulator's real limits: 100 reads and 20 writes a minute per key, pages clamped to 100. */
const REAL_LIMITS = { readLimit: 100, writeLimit: 20, windowMs: 60_000, maxLimit: 100 } as const;

/** A record's `updatedAt` as an instant (ISO, ms), or null when it has none. */
const instant = (v: unknown): string | null => (v == null ? null : new Date(String(v)).toISOString());

/**
 * A simulator with its real limits and two tenants (each its own key), a SQLite mirror, and a config that watches
 * both (`"watch": true`) with every schedule off, so whatever reaches the mirror after the first sync is watch's.
 * `firstSync()` runs `understudy sync --config`; `worker()` starts `understudy worker` on the same config.
 */
export async function watchRig(
  redisUrl: string,
  opts: {
    readonly records: number;
    readonly collections: readonly CollectionSlug[];
    /** A PostgreSQL mirror's URL instead of a SQLite file (`query` and `mirrored` then do not apply). */
    readonly database?: string;
  },
) {
  const sim = await startSimulator({ port: 0, records: opts.records, tenants: 2, ...REAL_LIMITS });
  onTestFinished(() => sim.close());
  const tenants = sim.tenants.slice(0, 2);
  const dir = tempDir();
  const db = join(dir, 'mirror.db');
  const configPath = join(dir, 'config.json');
  writeFileSync(
    configPath,
    JSON.stringify({
      baseUrl: sim.url,
      database: opts.database ?? db,
      redis: { prefix: `t-${randomUUID()}` },
      watch: true,
      tenants: tenants.map((t, i) => ({
        slug: t.slug,
        apiKeyEnv: `WATCH_KEY_${i}`,
        collections: opts.collections,
        schedule: { incrementalEveryMinutes: 0, fullCron: null },
      })),
    }),
  );
  const env: NodeJS.ProcessEnv = { REDIS_URL: redisUrl, LOG_LEVEL: 'info' };
  tenants.forEach((t, i) => {
    env[`WATCH_KEY_${i}`] = t.key;
  });
  /** Reads the mirror directly, read-only, as a person with sqlite3 would. */
  const query = <T = Record<string, unknown>>(sql: string, ...params: unknown[]): T[] => {
    const d = new Database(db, { readonly: true, fileMustExist: true });
    try {
      return d.prepare(sql).all(...params) as T[];
    } finally {
      d.close();
    }
  };
  /** The mirror's live rows of a tenant's collection: id to `updated_at`. */
  const mirrored = (slug: string, c: CollectionSlug): Record<string, string | null> =>
    Object.fromEntries(
      query<{ id: string; updated_at: string | null }>(
        `SELECT id, updated_at FROM ${tableFor(c)} WHERE tenant = ? AND deleted_at IS NULL`,
        slug,
      ).map((r) => [String(r.id), instant(r.updated_at)]),
    );
  /** The upstream's published records of a tenant's collection: key (id, or a medium's filename) to `updatedAt`. */
  const upstream = (slug: string, c: CollectionSlug): Record<string, string | null> =>
    Object.fromEntries(sim.controls.docs(slug, c).map((d) => [String(docKey(c, d)), instant(d.updatedAt)]));
  /** Every watched collection of every tenant holds exactly the upstream's records, each in its version. */
  const expectMirrorEqualsUpstream = () => {
    for (const t of tenants)
      for (const c of opts.collections) expect(mirrored(t.slug, c), `${t.slug}/${c}`).toEqual(upstream(t.slug, c));
  };
  const firstSync = async () => {
    const r = await runCli(['sync', '--config', configPath, '--quiet'], { env: { ...env, LOG_LEVEL: 'warn' } });
    expect(r.code, r.stderr).toBe(0);
  };
  const worker = (...args: string[]) => startWorker(configPath, args, env);
  /** The live holder of each tenant's watch (`watch_owners`), by tenant, on either engine. */
  const owners = async (): Promise<Map<string, string>> => {
    const sql = 'SELECT tenant, holder FROM watch_owners WHERE expires_at > ?';
    const at = new Date().toISOString();
    const rows = opts.database ? await pgQuery(opts.database, sql, [at]) : query(sql, at);
    return new Map(rows.map((r) => [String(r.tenant), String(r.holder)]));
  };
  /** Resolves once both tenants' watch is held (`watch_owners`, unexpired), within 20 s. */
  const bothWatched = () =>
    vi.waitFor(async () => expect((await owners()).size).toBe(2), { timeout: 20_000, interval: 200 });
  return {
    sim,
    tenants,
    db,
    configPath,
    env,
    query,
    mirrored,
    upstream,
    expectMirrorEqualsUpstream,
    firstSync,
    worker,
    bothWatched,
    owners,
  };
}

export type WatchRig = Awaited<ReturnType<typeof watchRig>>;

/** The most reads `tenant`'s key made in any 60 s window that starts at or after `from` (ms), per the simulator. */
export function peakReadsPerMinute(log: readonly RequestLogEntry[], tenant: string, from: number): number {
  const times = log
    .filter((e) => e.tenant === tenant && (e.method === 'GET' || e.method === 'HEAD') && e.status !== 429)
    .map((e) => Date.parse(e.at))
    .filter((t) => t >= from)
    .sort((a, b) => a - b);
  let peak = 0;
  let end = 0;
  for (let i = 0; i < times.length; i++) {
    while (end < times.length && (times[end] as number) < (times[i] as number) + 60_000) end++;
    peak = Math.max(peak, end - i);
  }
  return peak;
}

/** The `p` quantile (0 to 1) of `xs`, nearest rank. */
export const quantile = (xs: readonly number[], p: number): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)] ?? Number.NaN;
};

/** `GET /metrics` of a worker's ops port, as text. */
export const metricsOf = async (port: number): Promise<string> =>
  (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
