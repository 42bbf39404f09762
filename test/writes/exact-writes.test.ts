import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { openMirrorReader } from '../../src/index.js';
import { createWriteQueue } from '../../src/queue/write-queue.js';
import { parseJobData, validateWrite } from '../../src/writes/validate-write.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';
import { idOf, writeHarness } from './write-harness.js';

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

/** The job's data exactly as Redis holds it (BullMQ's hash field `data`). */
async function rawJobData(prefix: string, jobId: string): Promise<string> {
  const r = new Redis(redis.url);
  try {
    return (await r.hget(`${prefix}:writes:${jobId}`, 'data')) ?? '';
  } finally {
    r.disconnect();
  }
}

async function keysUnder(prefix: string): Promise<string[]> {
  const r = new Redis(redis.url);
  try {
    // BullMQ writes the queue's meta key when the client opens it: no job there.
    return (await r.keys(`${prefix}:*`)).filter((k) => k !== `${prefix}:writes:meta`);
  } finally {
    r.disconnect();
  }
}

const BIG = 9007199254740993n;

describe('integers beyond 2^53 in a write body', () => {
  it('are queued, sent upstream and reported exactly (a bigint through the API)', async () => {
    const h = await writeHarness({ redisUrl: redis.url, proxy: true, mirror: ['custom-attributes', 'organizations'] });
    await h.startWorker();
    const org = idOf(h.upstream('organizations')[0]);
    const jobId = await h.queue.bulkOrganizationAttributes(h.slug, { ids: [org], set: { founded: BIG } });
    expect(await rawJobData(h.prefix, jobId)).toContain('9007199254740993');
    const state = await h.queue.waitForWrite(jobId, { timeoutMs: 15_000 });
    expect(state).toMatchObject({ state: 'ok', summary: { matched: 1, updated: 1, failed: 0 } });
    const sent = h.proxy?.received().find((r) => r.method === 'PATCH' && r.path.includes('custom-attributes'));
    expect(sent?.body).toContain('"founded":9007199254740993');
    expect(sent?.body).not.toContain('9007199254740992');
  });

  it('refuses a JS number beyond 2^53 (already rounded) naming its path, and queues nothing', async () => {
    const prefix = `t-${Math.random().toString(36).slice(2, 10)}`;
    const q = await createWriteQueue({ redisUrl: redis.url, prefix, allowExtraFields: true });
    onTestFinished(() => q.close());
    await expect(
      q.update('acme', 'event-instances', '42', {
        booking: { bookingLinkLabel: 'x' },
        extra: { n: 2 ** 53 + 2 },
      } as never),
    ).rejects.toMatchObject({
      code: 'US_VALIDATION',
      message: expect.stringMatching(/"extra\.n".*9007199254740994.*beyond 2\^53.*bigint.*string/),
    });
    expect(await keysUnder(prefix)).toEqual([]);
    // The same value as a bigint, or any safe integer or fraction, is taken.
    await expect(
      validateWrite(
        { op: 'update', tenant: 'acme', collection: 'event-instances', id: '42', body: { extra: { n: BIG } } },
        null,
        { allowExtraFields: true },
      ),
    ).resolves.toMatchObject({ body: { extra: { n: BIG } } });
    await expect(
      validateWrite(
        { op: 'update', tenant: 'acme', collection: 'event-instances', id: '42', body: { extra: { n: 1.5, m: -42 } } },
        null,
        { allowExtraFields: true },
      ),
    ).resolves.toMatchObject({ op: 'update' });
  });

  it('refuses a number that is not finite (Infinity, -Infinity, NaN) in any write, naming its path', async () => {
    const prefix = `t-${Math.random().toString(36).slice(2, 10)}`;
    const q = await createWriteQueue({ redisUrl: redis.url, prefix, allowExtraFields: true });
    onTestFinished(() => q.close());
    const refused = (path: string, value: string) => ({
      code: 'US_VALIDATION',
      message: expect.stringContaining(`field "${path}" holds ${value}, not a finite number`),
    });
    await expect(
      q.bulkOrganizationAttributes('acme', { all: true, set: { founded: Number.POSITIVE_INFINITY } }),
    ).rejects.toMatchObject(refused('set.founded', 'Infinity'));
    await expect(
      q.bulkOrganizationAttributes('acme', { ids: [Number.NEGATIVE_INFINITY], set: { founded: 1999 } }),
    ).rejects.toMatchObject(refused('ids[0]', '-Infinity'));
    await expect(q.createSeries('acme', { title: 't', extra: { n: [1, Number.NaN] } } as never)).rejects.toMatchObject(
      refused('extra.n[1]', 'NaN'),
    );
    await expect(
      q.enqueue({ op: 'update', tenant: 'acme', collection: 'seasons', id: '7', body: { x: 1 / 0 } }),
    ).rejects.toMatchObject(refused('x', 'Infinity'));
    expect(await keysUnder(prefix)).toEqual([]);
  });

  it('refuses job data from Redis holding a number a double cannot hold, in a text body or an object body', async () => {
    const job = (body: unknown) => ({ op: 'bulk', tenant: 'acme', collection: 'organizations', body });
    await expect(parseJobData(job('{"all":true,"set":{"founded":1e400}}'))).rejects.toMatchObject({
      code: 'US_VALIDATION',
      message: expect.stringMatching(/field "set\.founded" holds the number 1e400, beyond/),
    });
    await expect(parseJobData(job('{"all":true,"set":{"founded":-1e-400}}'))).rejects.toThrow(
      /"set\.founded" holds the number -1e-400, too small/,
    );
    // BullMQ reads job data with JSON.parse, which makes 1e400 in another client's object body Infinity.
    await expect(
      parseJobData(
        JSON.parse(
          '{"op":"bulk","tenant":"acme","collection":"organizations","body":{"all":true,"set":{"founded":1e400}}}',
        ),
      ),
    ).rejects.toThrow(/field "set\.founded" holds Infinity, not a finite number/);
  });

  it('reads a body stored as exact JSON text back exactly (job data from Redis)', async () => {
    const data = await parseJobData({
      op: 'bulk',
      tenant: 'acme',
      collection: 'organizations',
      body: '{"all":true,"set":{"founded":9007199254740993}}',
    });
    expect(data).toMatchObject({ body: { all: true, set: { founded: BIG } } });
    await expect(
      parseJobData({ op: 'bulk', tenant: 'acme', collection: 'organizations', body: '{"all":' }),
    ).rejects.toThrow(/body.*not valid JSON/);
  });
});

describe('bulk custom-attribute writes checked at enqueue against the mirrored definitions', () => {
  it('refuses a key the tenant does not define, with the path and a did you mean, and a value outside the options', async () => {
    const h = await writeHarness({ redisUrl: redis.url, mirror: ['custom-attributes'] });
    await expect(
      h.queue.bulkOrganizationAttributes(h.slug, { all: true, set: { regoin: 'south' } }),
    ).rejects.toMatchObject({
      code: 'US_VALIDATION',
      message: expect.stringMatching(
        /set\.regoin: custom attribute "regoin" is not defined for organizations.*did you mean "region"\?/,
      ),
    });
    await expect(h.queue.bulkOrganizationAttributes(h.slug, { all: true, set: { region: 'west' } })).rejects.toThrow(
      /set\.region: "west" is not an allowed value of custom attribute region \(allowed: "north", "south", "international"\)/,
    );
    await expect(h.queue.bulkSeriesAttributes(h.slug, { all: true, set: { featured: 'yes' } })).rejects.toThrow(
      /set\.featured: custom attribute featured takes true or false/,
    );
    await expect(h.queue.bulkSeriesAttributes(h.slug, { all: true, unset: ['sponser'] })).rejects.toThrow(
      /unset\[0\]: custom attribute "sponser" is not defined for series.*did you mean "sponsor"\?/,
    );
    expect(await keysUnder(h.prefix)).toEqual([]);
    const ok = await h.queue.bulkSeriesAttributes(h.slug, {
      all: true,
      set: { featured: true, accessibility: 'captioned' },
      unset: ['sponsor'],
    });
    expect(ok).toBeTruthy();
  });

  it('queues the write and says so when the mirror has no definitions yet', async () => {
    const h = await writeHarness({ redisUrl: redis.url });
    const warnings: { code: string; message: string }[] = [];
    const q = await createWriteQueue({
      redisUrl: redis.url,
      prefix: h.prefix,
      store: h.store,
      onWarning: (w) => warnings.push(w),
    });
    onTestFinished(() => q.close());
    const jobId = await q.bulkOrganizationAttributes(h.slug, { all: true, set: { regoin: 'south' } });
    expect(jobId).toBeTruthy();
    expect(warnings).toContainEqual({
      code: 'US_UNCHECKED',
      message: expect.stringMatching(
        /no custom-attribute definitions are mirrored for tenant .*not checked.*understudy sync/,
      ),
    });
    // Said once per tenant and collection, not once a write.
    await q.bulkOrganizationAttributes(h.slug, { all: true, set: { region: 'south' } });
    expect(warnings.filter((w) => w.code === 'US_UNCHECKED')).toHaveLength(1);
  });

  it('says the client has no mirror to check against when it was given none, not that none is mirrored', async () => {
    // Issue 37, item 8: the definitions were mirrored, the client could not read them, and the warning said otherwise.
    const h = await writeHarness({ redisUrl: redis.url, mirror: ['custom-attributes'] });
    const warnings: { code: string; message: string }[] = [];
    const q = await createWriteQueue({ redisUrl: redis.url, prefix: h.prefix, onWarning: (w) => warnings.push(w) });
    onTestFinished(() => q.close());
    await q.bulkOrganizationAttributes(h.slug, { all: true, set: { region: 'south' } });
    expect(warnings).toContainEqual({
      code: 'US_UNCHECKED',
      message: expect.stringMatching(
        /^this client has no mirror to check against: .*pass `store: await openMirrorReader\(config\)`/,
      ),
    });
    expect(warnings.map((w) => w.message).join('\n')).not.toMatch(/no custom-attribute definitions are mirrored/);
  });

  it('checks against the mirror opened read-only with openMirrorReader, from the config or its path', async () => {
    const h = await writeHarness({ redisUrl: redis.url, mirror: ['custom-attributes'] });
    for (const from of [{ database: h.dbPath }, h.dbPath]) {
      const store = await openMirrorReader(from);
      onTestFinished(() => store.close());
      const warnings: { code: string }[] = [];
      const q = await createWriteQueue({
        redisUrl: redis.url,
        prefix: h.prefix,
        store,
        onWarning: (w) => warnings.push(w),
      });
      onTestFinished(() => q.close());
      await expect(q.bulkOrganizationAttributes(h.slug, { all: true, set: { regoin: 'south' } })).rejects.toMatchObject(
        {
          code: 'US_VALIDATION',
          message: expect.stringMatching(/set\.regoin: .*did you mean "region"\?/),
        },
      );
      expect(warnings.filter((w) => w.code === 'US_UNCHECKED')).toEqual([]);
    }
    expect(await keysUnder(h.prefix)).toEqual([]);
  });

  it('refuses a theme setting the mirrored schema does not have with the path and a did you mean', async () => {
    const h = await writeHarness({ redisUrl: redis.url, mirror: ['events'] });
    await expect(h.queue.bulkBlogThemeSettings(h.slug, { all: true, set: { heroStyel: 'split' } })).rejects.toThrow(
      /set\.heroStyel: theme setting "heroStyel" is not in the blogs theme-settings schema: did you mean "heroStyle"\?/,
    );
    await expect(h.queue.bulkBlogThemeSettings(h.slug, { all: true, set: { heroStyle: 'neon' } })).rejects.toThrow(
      /set\.heroStyle: theme setting heroStyle: "neon" is not an allowed option/,
    );
  });
});
