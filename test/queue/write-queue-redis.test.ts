import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { describe, expect, it, onTestFinished } from 'vitest';
import { appDir } from '../helpers/compile-app.js';
import { startRedis } from '../helpers/redis-server.js';
import { collect } from '../helpers/run-cli.js';

/**
 * The package's API fails like the CLI: Redis from REDIS_URL by default, an UnderstudyError `US_REDIS` when Redis is
 * not there, and nothing left that keeps the process alive. Each script runs in a process of its own, as an app
 * (the built package under node_modules/understudy), and must exit by itself: none calls process.exit.
 */
const closedPort = async (): Promise<number> => {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
};

const run = (script: string, env: NodeJS.ProcessEnv) => {
  const app = appDir();
  writeFileSync(join(app, 'main.mjs'), script);
  const child = spawn(process.execPath, ['main.mjs'], { cwd: app, env: { ...process.env, ...env } });
  onTestFinished(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  return child;
};
const lastJson = (out: string) => JSON.parse(out.trim().split('\n').at(-1) ?? 'null');

const REPORT = `const report = (e) => console.log(JSON.stringify({ code: e?.code ?? null, understudy: e instanceof mod.UnderstudyError, message: String(e?.message) }));`;

describe('the public API against an unreachable Redis', () => {
  it('createWriteQueue() and enqueueSync() reject with US_REDIS from REDIS_URL at a closed port, and the process exits', async () => {
    const port = await closedPort();
    const child = run(
      `import * as mod from 'understudy';
${REPORT}
await mod.createWriteQueue().then(() => console.log('resolved'), report);
await mod.enqueueSync({ tenant: 'acme', mode: 'full' }).then(() => console.log('resolved'), report);
await mod.enqueueSync({ tenant: 'Not A Slug', mode: 'full' }).then(() => console.log('resolved'), report);
`,
      { REDIS_URL: `redis://127.0.0.1:${port}` },
    );
    const r = await collect(child);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toEqual([
      { code: 'US_REDIS', understudy: true, message: expect.stringContaining(`127.0.0.1:${port}`) },
      { code: 'US_REDIS', understudy: true, message: expect.stringContaining(`127.0.0.1:${port}`) },
      { code: 'US_VALIDATION', understudy: true, message: expect.stringContaining('tenant') },
    ]);
  });

  it('createWriteQueue() with no redisUrl writes to the Redis of REDIS_URL', async () => {
    const redis = await startRedis({ own: true });
    onTestFinished(() => redis.stop());
    const child = run(
      `import * as mod from 'understudy';
const q = await mod.createWriteQueue({ prefix: 'envprobe' });
console.log(JSON.stringify({ id: await q.updateEventInstance('acme', '42', { booking: { bookingLinkLabel: 'From REDIS_URL' } }) }));
await q.close();
`,
      { REDIS_URL: redis.url },
    );
    const r = await collect(child);
    expect(r.code, r.stderr).toBe(0);
    const { id } = lastJson(r.stdout) as { id: string };
    const check = new Redis(redis.url);
    onTestFinished(() => check.disconnect());
    expect(await check.hget(`envprobe:writes:${id}`, 'data')).toContain('From REDIS_URL');
  });

  it('a call after Redis went away rejects with US_REDIS, and nothing keeps the process alive (no close())', async () => {
    const redis = await startRedis({ own: true });
    onTestFinished(() => redis.stop());
    const child = run(
      `import * as mod from 'understudy';
import { once } from 'node:events';
${REPORT}
const q = await mod.createWriteQueue({ redisUrl: process.env.PROBE_REDIS });
console.log('open');
await once(process.stdin.resume(), 'end');
await q.updateEventInstance('acme', '42', { booking: { bookingLinkLabel: 'x' } }).then(() => console.log('resolved'), report);
await q.getWrite('no-such-job').then(() => console.log('resolved'), report);
`,
      { PROBE_REDIS: redis.url },
    );
    const r = collect(child);
    await new Promise<void>((resolve) =>
      child.stdout?.on('data', (d: Buffer) => d.toString().includes('open') && resolve()),
    );
    await redis.kill();
    child.stdin?.end();
    const done = await r;
    expect(done.code, done.stderr).toBe(0);
    const lines = done.stdout
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => JSON.parse(l));
    expect(lines).toEqual([
      expect.objectContaining({ code: 'US_REDIS', understudy: true }),
      expect.objectContaining({ code: 'US_REDIS', understudy: true }),
    ]);
  });
});
