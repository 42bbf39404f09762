import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COLLECTIONS } from '../../src/vocabulary/collections.js';
import { generateReads, type SimRecords } from '../reads/read-requests.js';
import { call, expectProblem, type RunningServe, type ServeRig, serveRig } from './serve-rig.js';

// serve answers the upstream's reads at its paths from the mirror, over HTTP, as the simulator answers them (the
// whole comparison, on both engines, is test/reads/answer-read-differential.test.ts); tokens, a collection never
// synced, ETag and the limits on a where, as a client sees them.

let rig: ServeRig;
let serve: RunningServe;
const API = '/partners/2026-02';

beforeAll(async () => {
  rig = await serveRig({ sync: false });
  // Tenant A, every collection but forms; tenant B not at all.
  const colls = COLLECTIONS.filter((c) => c !== 'forms').flatMap((c) => ['--collection', c]);
  const r = await rig.cli('sync', '--tenant', rig.a, ...colls);
  expect(r.code, r.stderr).toBe(0);
  serve = await rig.serve();
});
afterAll(async () => {
  await rig?.close();
});

/** Without the populated tenant's display name, which the mirror does not hold. */
const withoutTenantName = (v: unknown): unknown =>
  JSON.parse(JSON.stringify(v), (k, x) => {
    if (k !== 'tenant' || !x || typeof x !== 'object' || !('slug' in x)) return x;
    const { name: _name, ...rest } = x as Record<string, unknown>;
    return rest;
  });

const simGet = async (path: string) => {
  const key = rig.sim.tenants.find((t) => t.slug === rig.a)?.key ?? '';
  const res = await fetch(`${rig.sim.url}${path}`, { headers: { authorization: `users API-Key ${key}` } });
  return { status: res.status, body: (await res.json()) as { docs: Record<string, unknown>[]; errors?: unknown } };
};

describe('serve: reads from the mirror', () => {
  it('answers lists and records at the upstream paths as the simulator does', async () => {
    const data: SimRecords = { [rig.a]: {} };
    for (const c of COLLECTIONS.filter((x) => x !== 'forms')) {
      const docs = (await simGet(`${API}/${rig.a}/${c}?limit=0&depth=0`)).body.docs;
      (data[rig.a] as SimRecords[string])[c] = { pub: docs, drf: [] };
    }
    const reads = generateReads(data, 35).filter((q) => !q.tags.some((t) => /^(draft|locale:)/.test(t)));
    expect(reads.length).toBeGreaterThan(80);
    const differs: string[] = [];
    for (const q of reads.filter((_, i) => i % 4 === 0)) {
      const path = `${API}/${q.tenant}/${q.collection}${q.id === null ? '' : `/${encodeURIComponent(q.id)}`}?${q.query}`;
      const [s, v] = [await simGet(path), await call(serve.url + path, { token: rig.tokens.reader })];
      const same =
        s.status === v.status &&
        (s.status === 404 ||
          JSON.stringify(withoutTenantName(s.status === 400 ? s.body.errors : s.body)) ===
            JSON.stringify(withoutTenantName(s.status === 400 ? (v.body as { errors: unknown }).errors : v.body)));
      if (!same) differs.push(`${decodeURIComponent(path)}: ${s.status} vs ${v.status} ${v.text.slice(0, 200)}`);
    }
    expect(differs).toEqual([]);
  });

  it('refuses a token without the read scope or of another tenant (403), and none (401)', async () => {
    const url = `${serve.url}${API}/${rig.a}/series?limit=1`;
    expectProblem(await call(url, { token: rig.tokens.changes }), 403);
    expectProblem(await call(url, { token: rig.tokens.other }), 403);
    expectProblem(await call(url), 401);
    expect((await call(url, { token: rig.tokens.writer })).status).toBe(200);
  });

  it('answers 503 naming a collection never synced rather than an empty list', async () => {
    const p = expectProblem(await call(`${serve.url}${API}/${rig.a}/forms`, { token: rig.tokens.reader }), 503);
    expect(p).toMatchObject({ code: 'US_NOT_SYNCED', detail: expect.stringContaining('forms') });
    expectProblem(await call(`${serve.url}${API}/${rig.b}/series`, { token: rig.tokens.reader }), 503);
  });

  it('gives an ETag that If-None-Match turns into a 304 with no body', async () => {
    const url = `${serve.url}${API}/${rig.a}/event-instances?limit=2&depth=0&sort=id`;
    const first = await call(url, { token: rig.tokens.reader });
    expect(first.status).toBe(200);
    const etag = first.headers.get('etag') as string;
    expect(first.headers.get('x-understudy-synced-at')).toMatch(/^\d{4}-/);
    const again = await call(url, { token: rig.tokens.reader, headers: { 'if-none-match': etag } });
    expect([again.status, again.text]).toEqual([304, '']);
  });

  it("carries the token's RateLimit headers on every answer: a record, a 304, a 404 and a problem", async () => {
    const base = `${serve.url}${API}/${rig.a}/event-instances`;
    const first = await call(`${base}?limit=1&depth=0`, { token: rig.tokens.reader });
    const id = (first.body as { docs: { id: string }[] }).docs[0]?.id as string;
    const record = await call(`${base}/${id}?depth=0`, { token: rig.tokens.reader });
    const answers = [
      record,
      await call(`${base}/${id}?depth=0`, {
        token: rig.tokens.reader,
        headers: { 'if-none-match': record.headers.get('etag') as string },
      }),
      await call(`${base}/no-such-record`, { token: rig.tokens.reader }),
      await call(`${base}?where${'[and][0]'.repeat(12)}[slug][exists]=true`, { token: rig.tokens.reader }),
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 304, 404, 400]);
    const remaining = answers.map((a) => Number(a.headers.get('ratelimit-remaining')));
    for (const a of answers) expect(a.headers.get('ratelimit-limit')).toMatch(/^\d+$/);
    // Each answer counted once, in order.
    expect(remaining.slice(1)).toEqual(remaining.slice(0, -1).map((n) => n - 1));
  });

  it('refuses a where nested too deep or too long with a 400 problem', async () => {
    const deep = `where${'[and][0]'.repeat(12)}[slug][exists]=true`;
    const many = Array.from({ length: 120 }, (_, i) => `where[or][${i}][slug][equals]=s${i}`).join('&');
    for (const q of [deep, many])
      expectProblem(await call(`${serve.url}${API}/${rig.a}/events?${q}`, { token: rig.tokens.reader }), 400);
  });
});
