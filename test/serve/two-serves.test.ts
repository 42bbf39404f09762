import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Answer, call, expectProblem, type RunningServe, type ServeRig, serveRig } from './serve-rig.js';

// Two serve processes on one Redis behave as one: an Idempotency-Key sent to both at once is one job and one
// upstream PATCH, and a token's rate limit is counted once across both.

const LIMIT = 10;
let rig: ServeRig;
let s1: RunningServe;
let s2: RunningServe;

beforeAll(async () => {
  rig = await serveRig({ api: { rateLimit: LIMIT } });
  [s1, s2] = await Promise.all([rig.serve(), rig.serve(), rig.worker()]);
});
afterAll(async () => {
  await rig?.close();
});

const label = (text: string) => ({ booking: { bookingLinkLabel: text } });

describe('two serve processes on one Redis', () => {
  it('take one Idempotency-Key sent to both at once as one job and one upstream PATCH; another body gets 422', async () => {
    const ei = rig.eventInstanceIds(rig.a)[2] as string;
    const key = `both-${Date.now()}`;
    const value = `Both ${key}`;
    const patch = (s: RunningServe, text: string) =>
      call(`${s.url}/partners/2026-02/${rig.a}/event-instances/${ei}`, {
        method: 'PATCH',
        token: rig.tokens.writer,
        headers: { 'idempotency-key': key },
        body: label(text),
      });
    const answers = await Promise.all([s1, s2, s1, s2, s1, s2].map((s) => patch(s, value)));
    const ids = new Set(answers.map((a) => (a.body as { id: string }).id));
    expect(ids.size, answers.map((a) => a.text).join('\n')).toBe(1);
    const id = [...ids][0] as string;
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 200, 200, 200, 202]);
    for (const a of answers) expect(a.headers.get('location')).toBe(`/v1/writes/${id}`);

    const done = await call(`${s2.url}/v1/writes/${id}?wait=30s`, { token: rig.tokens.writer });
    expect(done.body).toMatchObject({ jobId: id, state: 'ok' });
    expect(await rig.jobsHolding(value)).toBe(1);
    expect(rig.patchesOf(ei)).toBe(1);

    const other = await patch(s1, `Other ${key}`);
    expect(expectProblem(other, 422)).toMatchObject({ code: 'US_IDEMPOTENCY_CONFLICT', id });
    expect(await rig.jobsHolding(`Other ${key}`)).toBe(0);
    expect(rig.patchesOf(ei)).toBe(1);
  });

  it('share a token rate limit: the request past api.rateLimit, on either process, gets 429 with Retry-After', async () => {
    // The limit is a fixed one-minute window: start early in one so the requests all fall in it.
    const left = 60_000 - (Date.now() % 60_000);
    if (left < 5000) await new Promise((r) => setTimeout(r, left + 50));
    const list = (s: RunningServe): Promise<Answer> =>
      call(`${s.url}/v1/writes?state=failed`, { token: rig.tokens.other });
    const passed: Answer[] = [];
    for (let i = 0; i < LIMIT; i++) passed.push(await list(i % 2 === 0 ? s1 : s2));
    expect(passed.map((a) => a.status)).toEqual(Array(LIMIT).fill(200));
    // Counted once across both processes: what remains goes down by one whichever process answered.
    expect(passed.map((a) => Number(a.headers.get('ratelimit-remaining')))).toEqual(
      Array.from({ length: LIMIT }, (_, i) => LIMIT - 1 - i),
    );
    for (const a of passed) expect(a.headers.get('ratelimit-limit')).toBe(String(LIMIT));

    for (const s of [s1, s2]) {
      const refused = await list(s);
      expect(expectProblem(refused, 429)).toMatchObject({ code: 'US_RATE_LIMITED' });
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(refused.headers.get('ratelimit-limit')).toBe(String(LIMIT));
      expect(refused.headers.get('ratelimit-remaining')).toBe('0');
      expect(refused.headers.get('ratelimit-reset')).toBe(String(retryAfter));
    }
    // Another token keeps its own budget.
    expect((await call(`${s1.url}/v1/writes?state=failed`, { token: rig.tokens.reader })).status).toBe(200);
  });
});
