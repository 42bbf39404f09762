import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/sim/start-simulator.js';
import { createTestDatabase } from '../helpers/postgres.js';
import { BIN, type CliResult, collect } from '../helpers/run-cli.js';

/**
 * The analyst's questions asked through the built CLI, as a user would, over a mirror of the simulator synced with
 * `understudy sync`: discover the schema, read the views, local times, and search as upstream changes.
 */
let sim: Simulator;
let db: string;
let tenant: string;
let key: string;
const DAY = 86_400_000;

/** The built CLI; not `runCli`, which registers per-test cleanup the shared sync in `beforeAll` cannot have. */
const runCli = (args: string[]): Promise<CliResult> => {
  const env = { ...process.env, PARTNERS_API_KEY: key, LOG_LEVEL: 'warn' };
  return collect(spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] }));
};
const cli = async (...args: string[]) => {
  const r = await runCli(args);
  if (r.code !== 0) throw new Error(`understudy ${args.join(' ')} -> ${r.code}: ${r.stderr}`);
  return r.stdout;
};
const rows = async <T = Record<string, unknown>>(sql: string): Promise<T[]> =>
  JSON.parse(await cli('sql', '--db', db, '--json', sql)) as T[];
const sync = (...extra: string[]) => cli('sync', '--base-url', sim.url, '--tenant', tenant, '--db', db, ...extra);
const api = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${sim.url}/partners/2026-02/${tenant}/${path}`, {
    method,
    headers: { authorization: `users API-Key ${key}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  expect(res.status).toBe(200);
};
const searchIds = async (...args: string[]) =>
  (JSON.parse(await cli('search', '--db', db, '--json', '--limit', '100', ...args)) as { id: string }[]).map(
    (h) => h.id,
  );

/** Intl's local time of `iso` in `zone` with its offset, as start_local should read. */
const intlLocal = (iso: string, zone: string): string => {
  const at = Math.floor(Date.parse(iso) / 1000) * 1000;
  const p: Record<string, string> = {};
  const fmt = new Intl.DateTimeFormat('en-GB', {
    timeZone: zone,
    hourCycle: 'h23',
    ...{ year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' },
  });
  for (const x of fmt.formatToParts(at)) p[x.type] = x.value;
  const wall = `${p.year}-${p.month}-${p.day}T${p.hour}:${p.minute}:${p.second}`;
  const off = Math.round((Date.parse(`${wall}Z`) - at) / 60_000);
  const hhmm = `${String(Math.floor(Math.abs(off) / 60)).padStart(2, '0')}:${String(Math.abs(off) % 60).padStart(2, '0')}`;
  return `${wall}${off < 0 ? '-' : '+'}${hhmm}`;
};

beforeAll(async () => {
  sim = await startSimulator({ port: 0, readLimit: 0, writeLimit: 0, records: 30, seed: 17 });
  const t = sim.tenants[0]!;
  [tenant, key] = [t.slug, t.key];
  const dir = mkdtempSync(join(tmpdir(), 'understudy-'));
  db = join(dir, 'm.db');
  // Six performances in the coming days, three at venues that were never published (so never mirrored).
  const published = new Set(sim.controls.docs(tenant, 'venues').map((v) => String(v.id)));
  const all = sim.controls.docs(tenant, 'event-instances');
  const hidden = all.filter((e) => e.venue && !published.has(String(e.venue))).slice(0, 3);
  const shown = all.filter((e) => e.venue && published.has(String(e.venue))).slice(0, 3);
  expect(hidden).toHaveLength(3);
  for (const [k, e] of [...hidden, ...shown].entries())
    await api('PATCH', `event-instances/${e.id}`, {
      startDate: new Date(Date.now() + (k + 2) * DAY).toISOString(),
      startDate_tz: ['America/Los_Angeles', 'Europe/London', 'Asia/Tokyo'][k % 3],
    });
  await sync();
  return async () => {
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  };
});

describe('the analyst, from the command line', () => {
  it('discovers the tables and views with row counts, and what each column means', async () => {
    const [{ n = -1 } = {}] = await rows<{ n: number }>('SELECT count(*) AS n FROM event_instances');
    const tables = await cli('sql', '--db', db, '--tables');
    expect(tables).toMatch(new RegExp(`^event_instances +table +${n} +${n} +event instances`, 'm'));
    expect(tables).toMatch(/^upcoming_performances +view +\d+/m);
    expect(tables).toMatch(/^events_live +view +\d+/m);
    // `.tables` lists the names only, packed as the sqlite3 shell does: the ready answers first.
    const names = await cli('sql', '--db', db, '.tables');
    expect(names.split(/\s+/).filter(Boolean)).toEqual(
      [...tables.matchAll(/^(\w+) +(table|view|virtual)/gm)].map((m) => m[1]),
    );
    expect(names).toMatch(/^upcoming_performances +events_live +event_instances_live\n/);
    const schema = await cli('sql', '--db', db, '--schema', 'event_instances');
    expect(schema).toMatch(/^ {2}start_local +TEXT +local wall-clock time of `startDate`/m);
    expect(schema).toMatch(/^ {2}venue_id +TEXT /m);
    expect(await cli('sql', '--db', db, '.schema event_instances')).toBe(schema);
    const all = JSON.parse(await cli('sql', '--db', db, '--json', '--schema')) as { name: string }[];
    expect(all.map((r) => r.name)).toEqual(expect.arrayContaining(['custom_attributes', 'upcoming_performances']));
    const missing = await runCli(['sql', '--db', db, '--schema', 'nope']);
    expect([missing.code, missing.stderr]).toEqual([2, expect.stringContaining('no table or view named "nope"')]);
  });

  it('reads live rows and upcoming performances from views, keeping performances at unmirrored venues', async () => {
    for (const t of ['events', 'event_instances', 'venues', 'custom_attributes']) {
      const [r] = await rows<{ a: number; b: number }>(
        `SELECT (SELECT count(*) FROM ${t}_live) AS a, (SELECT count(*) FROM ${t} WHERE deleted_at IS NULL) AS b`,
      );
      expect(r!.a).toBe(r!.b);
    }
    const now = new Date().toISOString();
    const [counts] = await rows<{ view: number; live: number; novenue: number; unmirrored: number }>(
      `SELECT (SELECT count(*) FROM upcoming_performances) AS view,
        (SELECT count(*) FROM event_instances WHERE deleted_at IS NULL AND start_date >= '${now}') AS live,
        (SELECT count(*) FROM upcoming_performances WHERE venue_title IS NULL) AS novenue,
        (SELECT count(*) FROM event_instances i WHERE i.deleted_at IS NULL AND i.start_date >= '${now}' AND NOT EXISTS
          (SELECT 1 FROM venues v WHERE v.tenant = i.tenant AND v.id = i.venue_id AND v.deleted_at IS NULL)) AS unmirrored`,
    );
    expect(counts!.view).toBe(counts!.live);
    expect(counts!.novenue).toBe(counts!.unmirrored);
    expect(counts!.unmirrored).toBeGreaterThanOrEqual(3);
    const [first] = await rows('SELECT * FROM upcoming_performances ORDER BY start_date LIMIT 1');
    expect(Object.keys(first!)).toEqual([
      ...['tenant', 'instance_id', 'event_id', 'event_title', 'venue_id', 'venue_title', 'start_date'],
      ...['start_local', 'timezone', 'availability', 'booking_url'],
    ]);
  });

  it('shows each start as the venue prints it: local time with its offset, from the record zone', async () => {
    for (const table of ['event_instances', 'events', 'seasons', 'series']) {
      const live = await rows<{ sd: string; tz: string; sl: string; ed: string | null; el: string | null }>(
        `SELECT doc ->> 'startDate' AS sd, doc ->> 'startDate_tz' AS tz, start_local AS sl,
          doc ->> 'endDate' AS ed, coalesce(doc ->> 'endDate_tz', doc ->> 'startDate_tz') AS etz, end_local AS el
         FROM ${table}_live WHERE doc ->> 'startDate_tz' IS NOT NULL`,
      );
      expect(live.length, table).toBeGreaterThan(0);
      for (const r of live as ((typeof live)[number] & { etz: string })[]) {
        expect(r.sl, `${table} ${r.sd} ${r.tz}`).toBe(intlLocal(r.sd, r.tz));
        expect(r.el).toBe(r.ed ? intlLocal(r.ed, r.etz) : null);
      }
    }
    const [tokyo] = await rows<{ s: string }>(
      "SELECT start_local AS s FROM event_instances WHERE start_date_tz = 'Asia/Tokyo' LIMIT 1",
    );
    expect(tokyo!.s).toMatch(/\+09:00$/);
  });

  it('searches titles, and the index follows upstream edits and deletes through sync', async () => {
    // A word of an event's title that no venue name has (events are found by their venue's name too).
    const venues = sim.controls.docs(tenant, 'venues').map((v) => String(v.title).toLowerCase());
    const lastWord = (e: { title?: unknown }) => String(e.title).split(' ').at(-1)!;
    const event = sim.controls
      .docs(tenant, 'events')
      .find((e) => String(e.title).includes(' ') && !venues.some((v) => v.includes(lastWord(e).toLowerCase())))!;
    const id = String(event.id);
    const word = lastWord(event);
    expect(await searchIds(word)).toContain(id);
    expect(await searchIds(word, '--collection', 'events', '--tenant', tenant)).toContain(id);
    expect(await searchIds(word, '--tenant', 'someone-else')).toEqual([]);
    const hits = JSON.parse(await cli('search', '--db', db, '--json', word)) as Record<string, unknown>[];
    expect(Object.keys(hits[0]!)).toEqual(['collection', 'tenant', 'id', 'title', 'snippet', 'rank']);

    await api('PATCH', `events/${id}`, { title: 'Quorvellant Nights' });
    await sync();
    expect(await searchIds('quorvellant')).toEqual([id]);
    expect(await searchIds(word)).not.toContain(id);

    await api('DELETE', `events/${id}`);
    await sync('--full');
    expect(await searchIds('quorvellant')).toEqual([]);
  });
});

describe('the analyst, from the command line, on a PostgreSQL mirror', () => {
  let pgUrl: string;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    ({ url: pgUrl, drop } = await createTestDatabase());
    await cli('sync', '--base-url', sim.url, '--tenant', tenant, '--db', pgUrl);
    return () => drop();
  });
  const pgRows = async <T = Record<string, unknown>>(sql: string, ...args: string[]): Promise<T[]> =>
    JSON.parse(await cli('sql', '--db', pgUrl, '--json', ...args, sql)) as T[];

  it('lists the same tables and views, and the views count the same rows', async () => {
    const tables = await cli('sql', '--db', pgUrl, '--tables');
    expect(tables).toMatch(/^upcoming_performances +view +\d+/m);
    expect(tables).toMatch(/^events_live +view +\d+/m);
    expect(await cli('sql', '--db', pgUrl, '--schema', 'event_instances')).toMatch(/^ {2}start_local +TEXT +local/m);
    const [r] = await pgRows<{ a: number; b: number; c: number }>(
      `SELECT (SELECT count(*) FROM upcoming_performances) AS a,
        (SELECT count(*) FROM event_instances WHERE deleted_at IS NULL AND start_date >= :now) AS b,
        (SELECT count(*) FROM upcoming_performances WHERE venue_title IS NULL) AS c`,
      '-p',
      'now',
      new Date().toISOString(),
    );
    expect(r!.a).toBe(r!.b);
    expect(r!.c).toBeGreaterThanOrEqual(3);
  });

  it('has the same local times, and prints JSON values as JSON and integers exactly', async () => {
    const rows = await pgRows<{ sd: string; tz: string; sl: string }>(
      `SELECT doc ->> 'startDate' AS sd, doc ->> 'startDate_tz' AS tz, start_local AS sl FROM event_instances_live`,
    );
    expect(rows.length).toBeGreaterThan(50);
    for (const r of rows) expect(r.sl).toBe(intlLocal(r.sd, r.tz));
    const [j] = await pgRows<{ p: unknown; n: number }>(
      `SELECT doc -> 'participants' AS p, 9007199254740993 AS n FROM event_instances_live LIMIT 1`,
    );
    expect(Array.isArray(j!.p)).toBe(true);
    expect(await cli('sql', '--db', pgUrl, '--json', 'SELECT 9007199254740993 AS n')).toContain('"n":9007199254740993');
    const refused = await runCli(['sql', '--db', pgUrl, 'DELETE FROM events']);
    expect([refused.code, refused.stderr]).toEqual([2, expect.stringContaining('read-only')]);
  });

  it('searches, and the index follows an upstream title edit through sync', async () => {
    const event = sim.controls.docs(tenant, 'events').find((e) => String(e.title) !== 'Quorvellant Nights')!;
    const id = String(event.id);
    const ids = async (...args: string[]) =>
      (JSON.parse(await cli('search', '--db', pgUrl, '--json', ...args)) as { id: string }[]).map((h) => h.id);
    await api('PATCH', `events/${id}`, { title: `${String(event.title)} Zephrondix` });
    await cli('sync', '--base-url', sim.url, '--tenant', tenant, '--db', pgUrl);
    expect(await ids('zephrondix')).toEqual([id]);
    await api('PATCH', `events/${id}`, { title: `${String(event.title)} Xantheliq` });
    await cli('sync', '--base-url', sim.url, '--tenant', tenant, '--db', pgUrl);
    expect(await ids('xantheliq')).toEqual([id]);
    expect(await ids('zephrondix')).toEqual([]);
    const [hit] = JSON.parse(await cli('search', '--db', pgUrl, '--json', 'xanth*')) as Record<string, unknown>[];
    expect(Object.keys(hit!)).toEqual(['collection', 'tenant', 'id', 'title', 'snippet', 'rank']);
  });
});
