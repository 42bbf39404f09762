/**
 * serve's reads (issue 36): 100,000 event instances mirrored from the simulator into SQLite and into PostgreSQL,
 * each served by `understudy serve` (its own process, the product's entry point), and the simulator
 * (its own process) answering the same requests from memory. 16 clients at a time; requests a second and p50/p99 for
 * by-id reads, a page of 100 sorted by `startDate` with a `where` on `event`, a `like` on `title`, and depth 1.
 * Targets on SQLite: by id p99 ≤ 5 ms and ≥ 2,000 requests a second; a filtered page of 100 p99 ≤ 50 ms; PostgreSQL
 * within 2x of SQLite; serve at least as fast as the simulator for by-id reads.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { freshDatabase } from './postgres-database.js';
import { redisForBench } from './shared-budget.js';
import { BIN, freePort, quantile, sleep, spawnUnderstudy, stopChild, understudy } from './understudy-child.js';

const INSTANCES = Number(process.env.BENCH_SERVE_READS_INSTANCES ?? 100_000);
const CLIENTS = 16;
const SECONDS = Number(process.env.BENCH_SERVE_READS_SECONDS ?? 5);
/** Only the reads whose name holds this text (e.g. `by id`), for a profile; all of them by default. */
const ONLY = process.env.BENCH_SERVE_READS_ONLY ?? '';
/** Node flags for each serve process, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` (as the serve bench takes them). */
const NODE_ARGS = (process.env.BENCH_SERVE_NODE_ARGS ?? '').split(' ').filter(Boolean);
const API = '/partners/2026-02';

interface Target {
  readonly name: string;
  readonly url: string;
  readonly auth: string;
}

interface Load {
  readonly rps: number;
  readonly p50: number;
  readonly p99: number;
  readonly errors: number;
}

/** Waits until `url` answers `path` with 200 (a process starting). */
async function answering(url: string, path: string, auth: string, child: ChildProcess, log: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`exited ${child.exitCode}: ${readFileSync(log, 'utf8').slice(-400)}`);
    const r = await fetch(url + path, { headers: { authorization: auth } }).catch(() => null);
    if (r?.status === 200) return;
    await sleep(200);
  }
  throw new Error(`${url} did not answer ${path}`);
}

/** `CLIENTS` clients sending `next()`'s paths back to back for `seconds`; every answer must be 200. */
async function load(t: Target, next: () => string, seconds: number): Promise<Load> {
  const pool = new Pool(t.url, { connections: CLIENTS, pipelining: 1 });
  const ms: number[] = [];
  let errors = 0;
  const end = performance.now() + seconds * 1000;
  const client = async () => {
    while (performance.now() < end) {
      const s = performance.now();
      const r = await pool.request({ method: 'GET', path: next(), headers: { authorization: t.auth } });
      await r.body.text();
      if (r.statusCode !== 200) errors++;
      ms.push(performance.now() - s);
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: CLIENTS }, client));
  const wall = (performance.now() - t0) / 1000;
  await pool.close();
  return { rps: ms.length / wall, p50: quantile(ms, 0.5), p99: quantile(ms, 0.99), errors };
}

/** The simulator in its own process: its URL, its first tenant and key (from what it prints). */
async function startSim(): Promise<{ child: ChildProcess; url: string; tenant: string; key: string }> {
  const port = await freePort();
  const records = String(Math.ceil(INSTANCES / 3));
  const args = ['sim', '--port', String(port), '--seed', '36', '--records', records, '--read-limit', '0'];
  const child = spawn(process.execPath, [BIN, ...args, '--write-limit', '0', '--max-limit', '1000'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  for (let i = 0; i < 300 && !/tenant \S+ key \S+/.test(out); i++) await sleep(100);
  const m = /tenant (\S+) key (\S+)/.exec(out);
  if (!m) throw new Error(`the simulator printed no tenant: ${out.slice(-300)}`);
  return { child, url: `http://127.0.0.1:${port}`, tenant: m[1] as string, key: m[2] as string };
}

/** `xs` in a random order (Fisher-Yates). */
function shuffled<T>(xs: T[]): T[] {
  for (let i = xs.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [xs[i], xs[j]] = [xs[j] as T, xs[i] as T];
  }
  return xs;
}

const fmt = (n: number, d = 1) => (Number.isFinite(n) ? n.toFixed(d) : 'n/a');
const verdict = (ok: boolean) => (ok ? 'met' : '**not met**');

export default async function serveReads(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'understudy-bench-reads-'));
  const stops: (() => Promise<unknown>)[] = [];
  try {
    const sim = await startSim();
    stops.push(() => stopChild(sim.child));
    const redis = await redisForBench();
    stops.push(redis.stop);
    const pg = await freshDatabase('reads');
    stops.push(pg.drop);
    const env = {
      ...process.env,
      BENCH_KEY: sim.key,
      BENCH_READ_TOKEN: 'bench-read-token-0123456789',
      LOG_LEVEL: 'warn',
    };
    const db = join(dir, 'mirror.db');
    const tenant = {
      slug: sim.tenant,
      apiKeyEnv: 'BENCH_KEY',
      rateLimit: { reads: 1e9, writes: 1e9, windowMs: 60_000 },
    };
    const api = {
      tokens: [{ name: 'bench', tokenEnv: 'BENCH_READ_TOKEN', tenants: '*', scopes: ['read'] }],
      rateLimit: 1e9,
    };
    const config = (database: string) => ({
      baseUrl: sim.url,
      database,
      redis: { url: redis.url },
      tenants: [tenant],
      api,
    });
    writeFileSync(join(dir, 'sqlite.json'), JSON.stringify(config(db)));
    writeFileSync(join(dir, 'pg.json'), JSON.stringify(config(pg.url)));
    // Both mirrors at once, each by `understudy sync --full`: venues and series first, then the events and their
    // instances (a venue written after its events rewrites their search rows, slow on PostgreSQL).
    const t0 = performance.now();
    const syncInto = async (file: string) => {
      for (const colls of [
        ['venues', 'series'],
        ['events', 'event-instances'],
      ]) {
        const r = await understudy(
          ['sync', '--config', join(dir, file), '--full', '--quiet', ...colls.flatMap((c) => ['--collection', c])],
          env,
        );
        if (r.code !== 0) throw new Error(`sync exited ${r.code}: ${r.err.slice(-300)}`);
      }
    };
    await Promise.all([syncInto('sqlite.json'), syncInto('pg.json')]);
    const syncS = (performance.now() - t0) / 1000;

    const targets: Target[] = [{ name: 'simulator (memory)', url: sim.url, auth: `users API-Key ${sim.key}` }];
    for (const [name, file] of [
      ['serve, SQLite', 'sqlite.json'],
      ['serve, PostgreSQL', 'pg.json'],
    ] as const) {
      const port = await freePort();
      const log = join(dir, `${file}.log`);
      const args = ['serve', '--config', join(dir, file), '--port', String(port)];
      const child = spawnUnderstudy(args, env, log, NODE_ARGS);
      stops.push(() => stopChild(child));
      const t: Target = { name, url: `http://127.0.0.1:${port}`, auth: `Bearer ${env.BENCH_READ_TOKEN}` };
      await answering(t.url, `${API}/${sim.tenant}/series?limit=1&depth=0`, t.auth, child, log);
      targets.push(t);
    }

    // The request mix, drawn from the records themselves (the same paths for every target).
    const list = async (path: string) =>
      (
        (await (
          await fetch(`${sim.url}${API}/${sim.tenant}/${path}`, {
            headers: { authorization: `users API-Key ${sim.key}` },
          })
        ).json()) as { docs: Record<string, unknown>[] }
      ).docs;
    /** Every record of a collection (id and title), a page of 1,000 at a time, in a random order. */
    const all = async (collection: string) => {
      const out: Record<string, unknown>[] = [];
      for (let page = 1; ; page++) {
        const docs = await list(`${collection}?limit=1000&page=${page}&depth=0&sort=id&select[title]=true`);
        out.push(...docs);
        if (docs.length < 1000) break;
      }
      return shuffled(out);
    };
    const instances = await all('event-instances');
    const events = await all('events');
    const ids = instances.map((d) => String(d.id));
    const eventIds = events.map((d) => String(d.id));
    // A title's first word and its number ("Swan (212)"): thousands of distinct searches, each matching a few events.
    const words = events
      .map((d) => String(d.title ?? '').split(' '))
      .filter((w) => w.length > 1 && (w[0]?.length ?? 0) >= 3)
      .map((w) => `${w[0]} ${w[w.length - 1]}`);
    let n = 0;
    // Each request a different read: records drawn in a shuffled order, and a counter (`n=`, a parameter the upstream
    // and serve both ignore) in every query, so that no request is a kept answer…
    const at = <T>(xs: readonly T[]) => xs[n++ % xs.length] as T;
    const once = () => `&n=${n}`;
    // …but for the row that shows kept answers: the same 1,000 records over and over.
    const hot = ids.slice(0, 1000);
    const base = `${API}/${sim.tenant}`;
    const scenarios: [string, () => string][] = [
      ['by id', () => `${base}/event-instances/${at(ids)}?depth=0${once()}`],
      ['by id, the same 1,000 again and again', () => `${base}/event-instances/${at(hot)}?depth=0`],
      [
        'page of 100 by startDate, where event',
        () => `${base}/event-instances?where[event][equals]=${at(eventIds)}&sort=startDate&limit=100&depth=0${once()}`,
      ],
      [
        'like on title (events)',
        () => `${base}/events?where[title][like]=${encodeURIComponent(at(words))}&limit=100&depth=0${once()}`,
      ],
      [
        'depth 1 (25 instances of an event)',
        () => `${base}/event-instances?where[event][equals]=${at(eventIds)}&sort=startDate&limit=25&depth=1${once()}`,
      ],
    ];
    const results = new Map<string, Load>();
    const ran = scenarios.filter(([what]) => what.includes(ONLY));
    for (const [what, next] of ran)
      for (const t of targets) {
        await load(t, next, 1); // warm up: statements prepared, pages cached, JIT
        results.set(`${what}|${t.name}`, await load(t, next, SECONDS));
      }
    const rows = ran.flatMap(([what]) =>
      targets.map((t) => {
        const r = results.get(`${what}|${t.name}`) as Load;
        return `| ${what} | ${t.name} | ${fmt(r.rps, 0)} | ${fmt(r.p50, 2)} | ${fmt(r.p99, 2)} | ${r.errors} |`;
      }),
    );
    if (ran.length < scenarios.length) return `Only the reads holding "${ONLY}":\n\n${rows.join('\n')}`;
    const get = (what: string, t: string) => results.get(`${what}|${t}`) as Load;
    const byId = get('by id', 'serve, SQLite');
    const page = get('page of 100 by startDate, where event', 'serve, SQLite');
    // Over the reads each engine answers afresh (PostgreSQL keeps no answers, so the kept row is not a like for like).
    const fresh = scenarios.filter(([w]) => !w.includes('again'));
    const pgRatio = Math.max(...fresh.map(([w]) => get(w, 'serve, SQLite').rps / get(w, 'serve, PostgreSQL').rps));
    const simById = get('by id', 'simulator (memory)');
    const hotById = get('by id, the same 1,000 again and again', 'serve, SQLite');
    const hotSim = get('by id, the same 1,000 again and again', 'simulator (memory)');
    return `## serve: reads from the mirror

${INSTANCES.toLocaleString('en')} event instances (and their events, venues and series) mirrored from the
simulator by \`understudy sync --full\` into SQLite and into PostgreSQL at once (${fmt(syncS)} s); each mirror served by \`understudy serve\` in its own process, the simulator in its own process answering the
same requests from memory. ${CLIENTS} clients at a time, ${SECONDS} s per row after a 1 s warm-up; latencies in ms.
Machine load average at the end: ${fmt(loadavg()[0] ?? 0)} on ${cpus().length} cores (the clients share them).

| read | answered by | requests/s | p50 | p99 | errors |
| --- | --- | ---: | ---: | ---: | ---: |
${rows.join('\n')}

Targets:
- SQLite by id: p99 ${fmt(byId.p99, 2)} ms (≤ 5: ${verdict(byId.p99 <= 5)}), ${fmt(byId.rps, 0)} requests/s (≥ 2,000: ${verdict(byId.rps >= 2000)}).
- SQLite filtered page of 100: p99 ${fmt(page.p99, 2)} ms (≤ 50: ${verdict(page.p99 <= 50)}).
- PostgreSQL within 2x of SQLite (worst read answered afresh): ${fmt(pgRatio, 2)}x (${verdict(pgRatio <= 2)}).
- serve at least as fast as the simulator by id: ${fmt(byId.rps, 0)} vs ${fmt(simById.rps, 0)} requests/s (${verdict(byId.rps >= simById.rps)}); reading the same 1,000 records again and again (SQLite's kept answers): ${fmt(hotById.rps, 0)} vs ${fmt(hotSim.rps, 0)} (${verdict(hotById.rps >= hotSim.rps)}).

Every row but "the same 1,000 again and again" asks a different read on each request (records drawn shuffled from the
whole collection, and a counter \`n=\` in each query, which the upstream and serve ignore), so none is answered from
SQLite's kept answers (docs/api.md); that row shows them.`;
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}
