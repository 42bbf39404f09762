import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load-config.js';
import { ResponseTooLargeError, type UnderstudyError } from '../../src/errors.js';
import type { RateGate } from '../../src/partners/rate-gate.js';
import { decideRetry } from '../../src/partners/retry-delay.js';
import { type Simulator, startSimulator } from '../../src/sim/start-simulator.js';
import { tenantSlug } from '../../src/vocabulary/ids.js';
import { testPool } from '../helpers/http-pool.js';
import { createHttpPartnersClient, type HttpClientOptions } from '../helpers/partners-client.js';

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator({ tenants: 1, records: 10, readLimit: 0, writeLimit: 0 });
});
afterAll(async () => {
  await sim?.close();
});
beforeEach(() => sim.controls.reset());

/** A gate that grants at once and records the key-wide pauses asked of it (no real waiting). */
function recordingGate() {
  const pauses: number[] = [];
  let settles = 0;
  const gate: RateGate = {
    acquire: async () => 0,
    settle: () => {
      settles++;
    },
    release: () => {},
    pause: async (ms) => {
      pauses.push(ms);
    },
    close: async () => {},
  };
  return { gate, pauses, settles: () => settles };
}

function clientFor(over: Partial<HttpClientOptions> = {}) {
  const g = recordingGate();
  const sleeps: number[] = [];
  const tenant = sim.tenants[0];
  if (!tenant) throw new Error('no tenant');
  const client = createHttpPartnersClient({
    dispatcher: testPool(),
    baseUrl: sim.url,
    tenant: tenantSlug(tenant.slug),
    apiKey: tenant.key,
    gate: g.gate,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    random: () => 0,
    ...over,
  });
  return { client, sleeps, ...g };
}

const list = { collection: 'event-instances', limit: 10 } as const;
const eventRequests = () => sim.controls.requestLog().filter((e) => e.path.includes('event-instances'));

describe('retry waits', () => {
  it('waits a growing floor of at least 250 ms between retries when the upstream says Retry-After: 0', async () => {
    sim.controls.injectFaults({
      kind: 'rate-limit',
      retryAfterSeconds: 0,
      count: 3,
      match: { path: 'event-instances' },
    });
    const { client, pauses, settles } = clientFor();
    let rateLimited = 0;
    const page = await client.listPage(list, {
      signal: new AbortController().signal,
      onRateLimited: () => rateLimited++,
    });
    expect(page.docs.length).toBeGreaterThan(0);
    expect(pauses).toEqual([250, 500, 1000]);
    expect(rateLimited).toBe(3);
    expect(eventRequests()).toHaveLength(4);
    expect(settles()).toBe(4); // every grant is settled once its answer is in
  });

  it('never shortens a wait below the floor for a past date or RateLimit-Reset: 0, and lengthens it for a later one', () => {
    const policy = { attempts: 5, baseDelayMs: 250, maxDelayMs: 30_000 };
    const at = (n: number, hintMs: number | undefined, random = 0) =>
      decideRetry({ cls: 'rate', read: true, failures: 0, rateWaits: n, hintMs }, policy, () => random);
    expect([1, 2, 3, 4].map((n) => at(n, 0))).toMatchObject([
      { retry: true, delayMs: 250, pauseKey: true },
      { delayMs: 500 },
      { delayMs: 1000 },
      { delayMs: 2000 },
    ]);
    // Jitter adds up to half the floor, never takes from it.
    expect(at(1, 0, 0.999)).toMatchObject({ delayMs: 374 });
    expect(at(1, 4000)).toMatchObject({ delayMs: 4000 });
    expect(at(1, 120_000)).toMatchObject({ delayMs: 30_000 });
    expect(at(6, 0)).toEqual({ retry: false });
    const transient = decideRetry(
      { cls: 'transient', read: true, failures: 2, rateWaits: 0, hintMs: 0 },
      policy,
      () => 0,
    );
    expect(transient).toMatchObject({ retry: true, attempt: 2, delayMs: 500, pauseKey: false });
    expect(
      decideRetry({ cls: 'transient', read: false, failures: 1, rateWaits: 0, hintMs: 0 }, policy, () => 0),
    ).toEqual({ retry: false });
  });
});

describe('response size cap', () => {
  const rejection = async (p: Promise<unknown>): Promise<UnderstudyError> =>
    p.then(
      () => {
        throw new Error('expected a rejection');
      },
      (err: UnderstudyError) => err,
    );

  it('refuses a body over maxResponseBytes from its Content-Length, once, naming the route', async () => {
    sim.controls.injectFaults({ kind: 'huge', bytes: 64 * 1024 * 1024, count: 5, match: { path: 'event-instances' } });
    const { client, sleeps } = clientFor();
    const err = await rejection(client.listPage(list, { signal: new AbortController().signal }));
    expect(err).toBeInstanceOf(ResponseTooLargeError);
    expect(err.code).toBe('US_RESPONSE_TOO_LARGE');
    expect(err.message).toContain(`GET /partners/2026-02/${sim.tenants[0]?.slug}/event-instances ->`);
    expect(err.message).toContain(String(32 * 1024 * 1024));
    // The simulator logs a request when its socket closes, which the client's hang-up brings about.
    await expect.poll(() => eventRequests().length).toBe(1);
    expect(sleeps).toEqual([]);
  });

  it('stops reading a body without Content-Length as soon as it passes the cap', async () => {
    sim.controls.injectFaults({
      kind: 'huge',
      bytes: 8 * 1024 * 1024,
      chunked: true,
      count: 5,
      match: { path: 'event-instances' },
    });
    const { client } = clientFor({ maxResponseBytes: 1024 * 1024 });
    const err = await rejection(client.listPage(list, { signal: new AbortController().signal }));
    expect(err.code).toBe('US_RESPONSE_TOO_LARGE');
    await expect.poll(() => eventRequests().length).toBe(1);
  });

  it('reads a padded body under the cap as the valid envelope it is', async () => {
    sim.controls.injectFaults({
      kind: 'huge',
      bytes: 200_000,
      chunked: true,
      count: 1,
      match: { path: 'event-instances' },
    });
    const { client } = clientFor({ maxResponseBytes: 1024 * 1024 });
    const page = await client.listPage(list, { signal: new AbortController().signal });
    expect(page.docs).toEqual([]);
    expect(page.hasNextPage).toBe(false);
  });

  it('takes maxResponseBytes from the config: 32 MiB by default, an integer of at least 1024', () => {
    const base = { baseUrl: 'http://127.0.0.1:1', tenants: [{ slug: 'acme', apiKeyEnv: 'K' }] };
    expect(parseConfig(base).maxResponseBytes).toBe(32 * 1024 * 1024);
    expect(parseConfig({ ...base, maxResponseBytes: 4096 }).maxResponseBytes).toBe(4096);
    for (const bad of [100, 1.5e6 + 0.5, '1MB', -1])
      expect(() => parseConfig({ ...base, maxResponseBytes: bad })).toThrow(
        expect.objectContaining({ code: 'US_CONFIG', message: expect.stringContaining('maxResponseBytes') }),
      );
  });

  it('refuses a negative Retry-After or size in a fault', () => {
    expect(() => sim.controls.injectFaults({ kind: 'rate-limit', retryAfterSeconds: -1, count: 1 })).toThrow(
      /retryAfterSeconds/,
    );
    expect(() => sim.controls.injectFaults({ kind: 'huge', bytes: -5, count: 1 })).toThrow(/bytes/);
  });
});
