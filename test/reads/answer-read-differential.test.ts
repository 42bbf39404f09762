import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { partnersAgentOptions } from '../../src/partners/http-transport.js';
import { createMemoryRateGate } from '../../src/partners/memory-rate-gate.js';
import { answerRead, type ReadRequest } from '../../src/reads/answer-read.js';
import { type Simulator, startSimulator } from '../../src/sim/start-simulator.js';
import { openMirror } from '../../src/store/open-mirror.js';
import { type MirrorReads, openMirrorReads } from '../../src/store/reads/mirror-reads.js';
import { syncTenant } from '../../src/sync/sync-tenant.js';
import { COLLECTIONS } from '../../src/vocabulary/collections.js';
import { tenantSlug } from '../../src/vocabulary/ids.js';
import { createHttpPartnersClient } from '../helpers/partners-client.js';
import { createTestDatabase } from '../helpers/postgres.js';
import { silentLog } from '../helpers/sync-harness.js';
import { type GenRead, generateReads, type SimRecords } from './read-requests.js';

const API = '/partners/2026-02';

/** The simulator's answer to a read, by its own key. */
async function simAnswer(sim: Simulator, q: GenRead): Promise<{ status: number; body: unknown }> {
  const key = sim.tenants.find((t) => t.slug === q.tenant)?.key ?? '';
  const path = `${API}/${q.tenant}/${q.collection}${q.id === null ? '' : `/${encodeURIComponent(q.id)}`}`;
  const res = await fetch(`${sim.url}${path}?${q.query}`, { headers: { authorization: `users API-Key ${key}` } });
  return { status: res.status, body: await res.json() };
}

/** Every record, published and draft, as the simulator lists them (the generator draws its values from them). */
async function simRecords(sim: Simulator): Promise<SimRecords> {
  const out: SimRecords = {};
  for (const t of sim.tenants) {
    out[t.slug] = {};
    for (const c of COLLECTIONS) {
      const list = async (draft: boolean) =>
        (
          (
            await simAnswer(sim, {
              tenant: t.slug,
              collection: c,
              id: null,
              query: `limit=0&depth=0${draft ? '&draft=true' : ''}`,
              tags: [],
            })
          ).body as { docs: Record<string, unknown>[] }
        ).docs;
      (out[t.slug] as SimRecords[string])[c] = { pub: await list(false), drf: await list(true) };
    }
  }
  return out;
}

/** The one field a mirror cannot know: a populated tenant's display name (the records hold only its slug). */
const withoutTenantName = (v: unknown): unknown => {
  if (Array.isArray(v)) return v.map(withoutTenantName);
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      if (k === 'tenant' && x && typeof x === 'object' && 'slug' in x) {
        const { name: _name, ...rest } = x as Record<string, unknown>;
        out[k] = withoutTenantName(rest);
      } else out[k] = withoutTenantName(x);
    }
    return out;
  }
  return v;
};

/** How the mirror's answer differs from the simulator's: status, then the whole body (a 400's `errors`). */
function difference(sim: { status: number; body: unknown }, status: number, text: string | null): string | null {
  if (sim.status !== status) return `status ${sim.status} vs ${status}: ${text?.slice(0, 200)}`;
  if (status === 404) return null;
  const mine = JSON.parse(text ?? 'null') as { errors?: unknown };
  const [a, b] = status === 400 ? [(sim.body as { errors?: unknown }).errors, mine.errors] : [sim.body, mine];
  try {
    expect(withoutTenantName(b)).toEqual(withoutTenantName(a));
    return null;
  } catch (err) {
    return (err as Error).message.slice(0, 400);
  }
}

let sim: Simulator;
let reads: SimRecords;
let requests: GenRead[];
const answers = new Map<GenRead, { status: number; body: unknown }>();
const cleanup: (() => Promise<void>)[] = [];

beforeAll(async () => {
  sim = await startSimulator({ port: 0, seed: 36, records: 30, readLimit: 0, writeLimit: 0, maxLimit: 1000 });
  cleanup.push(() => sim.close());
  reads = await simRecords(sim);
  requests = generateReads(reads, 36);
  for (const q of requests) answers.set(q, await simAnswer(sim, q));
}, 120_000);

afterAll(async () => {
  for (const step of cleanup.reverse()) await step().catch(() => undefined);
});

/** A mirror of every tenant (drafts, `fr` and `all` copies), fully synced from the simulator. */
async function mirrorOf(database: string): Promise<MirrorReads> {
  const { store } = await openMirror(database);
  const dispatcher = new Agent(partnersAgentOptions());
  try {
    for (const t of sim.tenants) {
      const client = createHttpPartnersClient({
        dispatcher,
        baseUrl: sim.url,
        tenant: tenantSlug(t.slug),
        apiKey: t.key,
        gate: createMemoryRateGate({ reads: 1_000_000, writes: 1_000_000, windowMs: 1000 }),
        retry: { attempts: 3, baseDelayMs: 1, maxDelayMs: 50 },
        log: silentLog,
      });
      const deps = { client, store, log: silentLog };
      const target = { slug: tenantSlug(t.slug), drafts: true, locales: ['fr', 'all'] };
      await syncTenant(deps, target, 'full', AbortSignal.timeout(60_000));
    }
  } finally {
    await store.close();
    await dispatcher.close();
  }
  const opened = await openMirrorReads(database, { timeoutMs: 10_000 });
  cleanup.push(() => opened.close());
  return opened;
}

const request = (q: GenRead): ReadRequest => ({ tenant: q.tenant, collection: q.collection, id: q.id, query: q.query });

describe.each([
  [
    'SQLite',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'understudy-'));
      cleanup.push(async () => rmSync(dir, { recursive: true, force: true }));
      return join(dir, 'mirror.db');
    },
  ],
  [
    'PostgreSQL',
    async () => {
      const db = await createTestDatabase();
      cleanup.push(db.drop);
      return db.url;
    },
  ],
])('reads from a %s mirror', (_engine, database) => {
  let mirror: MirrorReads;
  beforeAll(async () => {
    mirror = await mirrorOf(await database());
  }, 120_000);

  it('answers 300+ generated reads as the simulator does: status, envelope, every doc at every depth, errors', async () => {
    expect(requests.length).toBeGreaterThanOrEqual(300);
    const tags = new Set(requests.flatMap((q) => q.tags));
    for (const t of [
      'op:in',
      'op:like',
      'op:exists',
      'array path',
      'nested path',
      'draft',
      'locale:fr',
      'locale:all',
      'depth:2',
      'by id',
      'never published',
      'page past the end',
      'bad parameter',
      'through a relationship',
      'two relationships deep',
    ])
      expect(tags).toContain(t);
    const differs: string[] = [];
    for (const q of requests) {
      const a = await answerRead({ reads: mirror, maxLimit: 1000 }, request(q));
      const d = difference(answers.get(q) as { status: number; body: unknown }, a.status, a.body);
      if (d) differs.push(`${q.collection}${q.id ? `/${q.id}` : ''}?${decodeURIComponent(q.query)}\n  ${d}`);
    }
    expect(differs).toEqual([]);
  });

  it('serves a list with an ETag, the newest updatedAt as Last-Modified, and 304 for If-None-Match', async () => {
    const t = sim.tenants[0]?.slug as string;
    const q: ReadRequest = { tenant: t, collection: 'series', id: null, query: 'depth=0&sort=-updatedAt&limit=3' };
    const a = await answerRead({ reads: mirror, maxLimit: 1000 }, q);
    const docs = (JSON.parse(a.body ?? '{}') as { docs: { updatedAt: string }[] }).docs;
    expect(a.headers['last-modified']).toBe(new Date(docs[0]?.updatedAt as string).toUTCString());
    expect(a.headers['x-understudy-synced-at']).toMatch(/^\d{4}-\d\d-\d\dT/);
    const again = await answerRead({ reads: mirror, maxLimit: 1000 }, { ...q, ifNoneMatch: a.headers.etag });
    expect(again).toMatchObject({ status: 304, body: null });
  });

  it('caps limit at maxLimit and refuses a where too deep or too long with a problem', async () => {
    const t = sim.tenants[0]?.slug as string;
    const capped = await answerRead(
      { reads: mirror, maxLimit: 2 },
      { tenant: t, collection: 'events', id: null, query: 'limit=50&depth=0' },
    );
    expect(JSON.parse(capped.body ?? '{}')).toMatchObject({ limit: 2, docs: [{}, {}] });
    const deep = `where${'[and][0]'.repeat(9)}[slug][exists]=true`;
    const many = Array.from({ length: 101 }, (_, i) => `where[or][${i}][slug][equals]=s${i}`).join('&');
    for (const query of [deep, many]) {
      const a = await answerRead(
        { reads: mirror, maxLimit: 1000 },
        { tenant: t, collection: 'events', id: null, query },
      );
      expect(a.status).toBe(400);
      expect(a.headers['content-type']).toBe('application/problem+json');
    }
  });
});
