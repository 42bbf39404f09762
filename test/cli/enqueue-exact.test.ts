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

  it('refuses a number a double cannot hold (1e400, -1e400, 1e-400) naming its path, exit 2, nothing in Redis', async () => {
    const { prefix, enqueue } = await setup();
    const bulk = ['--op', 'bulk', '--collection', 'organizations'];
    const refused = [
      [
        ...bulk,
        '--body',
        '{"all":true,"set":{"founded":1e400}}',
        /field "set\.founded" holds the number 1e400, beyond/,
      ],
      [...bulk, '--body', '{"all":true,"set":{"founded":-1e400}}', /"set\.founded" holds the number -1e400/],
      [...bulk, '--body', '{"all":true,"set":{"founded":1E-400}}', /"set\.founded" holds the number 1E-400, too small/],
      [
        '--op',
        'create',
        '--collection',
        'series',
        '--body',
        '{"title":"t","extra":{"n":[1,2e999]}}',
        /"extra\.n\[1\]"/,
      ],
      ['--op', 'update', '--collection', 'seasons', '--id', '7', '--body', '{"extra":{"n":1e309}}', /"extra\.n"/],
    ] as const;
    for (const args of refused) {
      const r = await enqueue(...(args.slice(0, -1) as string[]));
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(args[args.length - 1] as RegExp);
    }
    // Refused before the queue is opened: not even BullMQ's meta key is written under the prefix.
    const r = new Redis(redis.url);
    onTestFinished(() => r.disconnect());
    expect(await r.keys(`${prefix}:*`)).toEqual([]);
    // The same write with a number a double holds is queued; a finite number as large as 1e308 is not refused for
    // being out of range (the 2^53 rule refuses it, as any inexact integer).
    const ok = await enqueue(...bulk, '--body', '{"all":true,"set":{"founded":1999}}');
    expect(ok.code, ok.stderr).toBe(0);
    const large = await enqueue(...bulk, '--body', '{"all":true,"set":{"founded":1e308}}');
    expect(large.stderr).toMatch(/beyond 2\^53/);
    const small = await enqueue(...bulk, '--body', '{"all":true,"set":{"founded":5e-324}}');
    expect(small.code, small.stderr).toBe(0);
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
