import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { parseConfig } from '../../src/config/load-config.js';
import { createWriteQueue } from '../../src/queue/write-queue.js';
import { parseJobData, poisonKeyIn, validateWrite } from '../../src/writes/validate-write.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';
import { runCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/sync-harness.js';

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

const create = (body: unknown) => ({ op: 'create', tenant: 'acme', collection: 'series', body });
/** A series body whose compact JSON is exactly `bytes` long. */
const seriesOfSize = (bytes: number) => {
  const base = JSON.stringify({ title: 'T', slug: 's', description: '' }).length;
  return { title: 'T', slug: 's', description: 'x'.repeat(bytes - base) };
};

/** Every key under a prefix but the queue's own meta (written when a queue opens): a refused write leaves none. */
async function keysUnder(prefix: string): Promise<string[]> {
  const r = new Redis(redis.url);
  onTestFinished(() => {
    r.disconnect();
  });
  return (await r.keys(`${prefix}:*`)).filter((k) => k !== `${prefix}:writes:meta`);
}

describe('bounded, well-formed write bodies at enqueue', () => {
  it('caps the body at maxBodyBytes of compact JSON (default 1 MiB)', async () => {
    const mib = 1024 * 1024;
    await expect(validateWrite(create(seriesOfSize(mib)), null)).resolves.toMatchObject({ op: 'create' });
    await expect(validateWrite(create(seriesOfSize(mib + 1)), null)).rejects.toMatchObject({
      code: 'US_VALIDATION',
      message: `body is ${mib + 1} bytes of JSON, over the cap of ${mib} (config writes.maxBodyBytes)`,
    });
    await expect(validateWrite(create(seriesOfSize(101)), null, { maxBodyBytes: 100 })).rejects.toThrow(/over the cap/);
  });

  it.each([
    ['an own __proto__ key from JSON.parse', '{"title":"x","__proto__":{"polluted":1}}', '__proto__'],
    [
      'constructor, nested in an array',
      '{"title":"x","meta":[{"a":{"constructor":{"prototype":1}}}]}',
      'meta[0].a.constructor',
    ],
    ['prototype, deep down', '{"title":"x","meta":{"a":{"b":{"prototype":1}}}}', 'meta.a.b.prototype'],
  ])('refuses %s anywhere in a body', async (_name, json, path) => {
    expect(poisonKeyIn(JSON.parse(json))).toBe(path);
    await expect(validateWrite(create(JSON.parse(json)), null, { allowExtraFields: true })).rejects.toMatchObject({
      code: 'US_VALIDATION',
      message: expect.stringContaining(`"${path}"`),
    });
  });

  it('refuses a body built in code that is not JSON (a cycle), with a validation error', async () => {
    const body: Record<string, unknown> = { title: 'x' };
    body.meta = { self: body };
    expect(poisonKeyIn(body)).toBeNull();
    await expect(validateWrite(create(body), null)).rejects.toMatchObject({
      code: 'US_VALIDATION',
      message: expect.stringMatching(/^body is not JSON: /),
    });
  });

  it('refuses prototype keys in bulk bodies and in job data read back by the worker', async () => {
    const bulk = {
      op: 'bulk',
      tenant: 'acme',
      collection: 'series',
      body: JSON.parse('{"all":true,"set":{"__proto__":1}}'),
    };
    await expect(validateWrite(bulk, null)).rejects.toThrow(/"set.__proto__" is refused/);
    await expect(parseJobData(create(JSON.parse('{"title":"x","__proto__":{}}')))).rejects.toThrow(/__proto__/);
  });

  it('refuses fields the spec does not show for the resource, unless the tenant allows extra fields', async () => {
    await expect(validateWrite(create({ title: 'x', slug: 'y', colour: 'red' }), null)).rejects.toMatchObject({
      code: 'US_VALIDATION',
      message:
        'field "colour" is not in the spec\'s series resource shape (set writes.allowExtraFields on tenant acme in ' +
        'the config to send fields the spec does not show)',
    });
    const patch = { op: 'patch', tenant: 'acme', collection: 'event-instances', id: '7', body: { bookingLabel: 'x' } };
    await expect(validateWrite(patch, null)).rejects.toThrow(/"bookingLabel" is not in the spec's event-instances/);
    await expect(
      validateWrite({ ...patch, body: { booking: { bookingLinkLabel: 'Book' } } }, null),
    ).resolves.toMatchObject({ op: 'update', id: '7' });
    await expect(
      validateWrite(create({ title: 'x', colour: 'red' }), null, { allowExtraFields: true }),
    ).resolves.toMatchObject({ body: { colour: 'red' } });
    // The worker does not re-apply enqueue-time rules to data already queued.
    await expect(parseJobData(create({ title: 'x', colour: 'red' }))).resolves.toMatchObject({ op: 'create' });
  });

  it('parses every job with the one write-job schema: unknown job fields are refused', async () => {
    await expect(parseJobData({ ...create({ title: 'x' }), seq: 3 })).resolves.toMatchObject({ seq: 3 });
    await expect(validateWrite({ ...create({ title: 'x' }), draft: true }, null)).resolves.toMatchObject({
      draft: true,
    });
  });

  it('reads writes.maxBodyBytes and a tenant writes.allowExtraFields from the config', () => {
    const base = { baseUrl: 'https://partners.example.org', tenants: [{ slug: 'acme', apiKeyEnv: 'K' }] };
    const plain = parseConfig({ ...base, writes: {} });
    expect(plain.writes?.maxBodyBytes).toBe(1024 * 1024);
    expect(plain.tenants[0]?.writes).toBeUndefined();
    const set = parseConfig({
      ...base,
      writes: { maxBodyBytes: 2048 },
      tenants: [{ slug: 'acme', apiKeyEnv: 'K', writes: { allowExtraFields: true } }],
    });
    expect(set.writes?.maxBodyBytes).toBe(2048);
    expect(set.tenants[0]?.writes?.allowExtraFields).toBe(true);
    expect(() => parseConfig({ ...base, writes: { maxBodyBytes: 0 } })).toThrow(/writes.maxBodyBytes/);
  });
});

describe('createWriteQueue and understudy enqueue: a refused body leaves nothing in Redis', () => {
  it('the TypeScript client refuses a 2 MiB body and a __proto__ key, and takes limits from the config', async () => {
    const prefix = `t-${randomUUID().slice(0, 8)}`;
    const config = parseConfig({
      baseUrl: 'https://partners.example.org',
      writes: { maxBodyBytes: 4096 },
      tenants: [
        { slug: 'acme', apiKeyEnv: 'K' },
        { slug: 'loose', apiKeyEnv: 'K', writes: { allowExtraFields: true } },
      ],
    });
    const q = await createWriteQueue({ redisUrl: redis.url, prefix });
    onTestFinished(() => q.close());
    await expect(q.createSeries('acme', seriesOfSize(2 * 1024 * 1024))).rejects.toMatchObject({
      code: 'US_VALIDATION',
    });
    await expect(q.createSeries('acme', JSON.parse('{"title":"x","__proto__":{"polluted":1}}'))).rejects.toThrow(
      /__proto__/,
    );
    const fromConfig = await createWriteQueue({ redisUrl: redis.url, prefix, config });
    onTestFinished(() => fromConfig.close());
    await expect(fromConfig.createSeries('acme', seriesOfSize(4097))).rejects.toThrow(/over the cap of 4096/);
    // @ts-expect-error colour is not in the spec's series shape: the compiler refuses it, and so does the queue
    await expect(fromConfig.createSeries('acme', { title: 'x', colour: 'red' })).rejects.toThrow(/"colour"/);
    expect(await keysUnder(prefix)).toEqual([]);
    // @ts-expect-error a tenant with writes.allowExtraFields sends it all the same
    const id = await fromConfig.createSeries('loose', { title: 'x', colour: 'red' });
    expect(id).toBeTruthy();
    expect((await keysUnder(prefix)).length).toBeGreaterThan(0);
  });

  it('the CLI exits 2 for a 2 MiB body, a __proto__ key and what deep validation refuses, with nothing queued', async () => {
    const dir = tempDir();
    const prefix = `t-${randomUUID().slice(0, 8)}`;
    const cfg = join(dir, 'c.json');
    writeFileSync(
      cfg,
      JSON.stringify({
        baseUrl: 'http://127.0.0.1:9',
        database: join(dir, 'm.db'),
        redis: { url: redis.url, prefix },
        tenants: [{ slug: 'acme', apiKeyEnv: 'K' }],
      }),
    );
    const env = { REDIS_URL: redis.url };
    const args = ['enqueue', '--config', cfg, '--tenant', 'acme', '--op', 'create', '--collection', 'series'];
    const big = JSON.stringify({ title: 'BigBodyProbe', slug: 'big', description: 'x'.repeat(2 * 1024 * 1024) });
    const r1 = await runCli([...args, '--body', '-'], { env, input: big });
    expect(r1.code).toBe(2);
    expect(r1.stderr).toMatch(/over the cap of 1048576/);
    // Far over the cap, stdin is not even read to the end.
    const huge = await runCli([...args, '--body', '-'], { env, input: 'x'.repeat(8 * 1024 * 1024) });
    expect(huge.code).toBe(2);
    const r2 = await runCli([...args, '--body', '{"title":"ProtoProbe","slug":"p","__proto__":{"polluted":1}}'], {
      env,
    });
    expect(r2.code).toBe(2);
    expect(r2.stderr).toMatch(/"__proto__" is refused/);
    const r3 = await runCli([...args, '--body', '{"title":"Extra","colour":"red"}'], { env });
    expect(r3.code).toBe(2);
    expect(r3.stderr).toMatch(/"colour" is not in the spec's series resource shape/);
    // Deep validation: a misspelt nested field, an empty patch, ids that would address another route, deep nesting.
    const patch = ['enqueue', '--config', cfg, '--tenant', 'acme', '--op', 'patch', '--collection', 'event-instances'];
    const deep = `{"booking":${'{"a":'.repeat(2_000)}1${'}'.repeat(2_000)}}`;
    for (const [id, body, why] of [
      ['42', '{"booking":{"bookingLinkLable":"Book"}}', /"booking.bookingLinkLable" .*did you mean "bookingLinkLabel"/],
      ['42', '{}', /the body is empty/],
      ['..', '{"booking":{"bookingLinkLabel":"Book"}}', /^understudy enqueue: id "\.\." is a dot segment/],
      ['42\r', '{"booking":{"bookingLinkLabel":"Book"}}', /id "42\\r" holds a control character/],
      ['42', deep, /nested more than 64 levels deep/],
    ] as const) {
      const r = await runCli([...patch, '--id', id, '--body', body], { env });
      expect({ id, code: r.code, lines: r.stderr.trim().split('\n').length }).toEqual({ id, code: 2, lines: 1 });
      expect(r.stderr).toMatch(why);
    }
    expect(await keysUnder(prefix)).toEqual([]);
    const ok = await runCli([...args, '--body', '{"title":"Fine","slug":"fine"}'], { env });
    expect(ok.code).toBe(0);
    expect(await keysUnder(prefix)).not.toEqual([]);
  });
});
