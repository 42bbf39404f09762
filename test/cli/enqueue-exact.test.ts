import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { startSimulator } from '../../src/sim/start-simulator.js';
import { writeConfig } from '../helpers/operator.js';
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

/** Every value the writes queue holds in Redis under a prefix (hashes' fields and strings), as one text to search. */
async function valuesUnder(prefix: string): Promise<string> {
  const r = new Redis(redis.url);
  try {
    const out: string[] = [];
    // BullMQ's meta key (written when a client opens the queue) holds no job.
    for (const k of (await r.keys(`${prefix}:writes:*`)).filter((x) => x !== `${prefix}:writes:meta`)) {
      const type = await r.type(k);
      if (type === 'hash') out.push(...Object.values(await r.hgetall(k)));
      else if (type === 'string') out.push((await r.get(k)) ?? '');
    }
    return out.join('\n');
  } finally {
    r.disconnect();
  }
}

async function setup() {
  const sim = await startSimulator({ port: 0, readLimit: 0, writeLimit: 0, records: 5, routes: 'full' });
  onTestFinished(() => sim.close());
  const t = sim.tenants[0];
  if (!t) throw new Error('no tenant');
  const dir = tempDir();
  const prefix = `t-${randomUUID().slice(0, 8)}`;
  const cfg = writeConfig(dir, 'c.json', {
    baseUrl: sim.url,
    database: join(dir, 'm.db'),
    redis: { url: redis.url, prefix },
    tenants: [{ slug: t.slug, apiKeyEnv: 'K', writes: { allowExtraFields: true } }],
  });
  const env = { REDIS_URL: redis.url, K: t.key };
  const enqueue = (...args: string[]) => runCli(['enqueue', '--config', cfg, '--tenant', t.slug, ...args], { env });
  return { sim, t, cfg, env, prefix, enqueue };
}

describe('understudy enqueue: exact writes', () => {
  it('queues --body {"bigProbe":9007199254740993} with the integer exact, never rounded', async () => {
    const { prefix, enqueue } = await setup();
    const r = await enqueue(
      '--op',
      'patch',
      '--collection',
      'event-instances',
      '--id',
      '42',
      '--body',
      '{"bigProbe":9007199254740993}',
    );
    expect(r.code, r.stderr).toBe(0);
    const held = await valuesUnder(prefix);
    expect(held).toContain('9007199254740993');
    expect(held).not.toContain('9007199254740992');
  });

  it('refuses a bulk attribute key or value the mirrored definitions do not allow (exit 2, one line, nothing queued)', async () => {
    const { cfg, env, prefix, enqueue } = await setup();
    const synced = await runCli(['sync', '--config', cfg, '--collection', 'custom-attributes', '--quiet'], { env });
    expect(synced.code, synced.stderr).toBe(0);
    const bulk = ['--op', 'bulk', '--collection', 'series'];
    const typo = await enqueue(...bulk, '--body', '{"all":true,"set":{"featurd":true}}');
    expect(typo.code).toBe(2);
    expect(typo.stderr.trim().split('\n')).toHaveLength(1);
    expect(typo.stderr).toMatch(
      /set\.featurd: custom attribute "featurd" is not defined for series.*did you mean "featured"\?/,
    );
    const value = await enqueue(...bulk, '--body', '{"all":true,"set":{"accessibility":"loud-and-clear"}}');
    expect(value.code).toBe(2);
    expect(value.stderr).toMatch(/"loud-and-clear" is not an allowed value of custom attribute accessibility/);
    expect(await valuesUnder(prefix)).toBe('');
    const ok = await enqueue(...bulk, '--body', '{"all":true,"set":{"featured":true,"accessibility":"captioned"}}');
    expect(ok.code, ok.stderr).toBe(0);
  });

  it('queues a bulk attribute write when no definitions are mirrored yet, and says so', async () => {
    const { enqueue } = await setup();
    const r = await enqueue(
      '--op',
      'bulk',
      '--collection',
      'organizations',
      '--body',
      '{"all":true,"set":{"regoin":"south"}}',
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/^understudy enqueue: warning: no custom-attribute definitions are mirrored for tenant/m);
  });
});
