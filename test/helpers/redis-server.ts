import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';

export interface TestRedis {
  readonly url: string;
  readonly port: number;
  /** True when the server is our own child (REDIS_URL unset): `restart` and `kill` are then available. */
  readonly owned: boolean;
  /** Stops the server for good (SHUTDOWN NOSAVE) and removes its directory. */
  stop(): Promise<void>;
  /** Stops the server with its data saved (SHUTDOWN SAVE) and starts it again on the same port, data reloaded. */
  restart(): Promise<void>;
  /** SIGKILLs the server: every connection fails until `restart` (data since start is lost). */
  kill(): Promise<void>;
  /** Stops the server with its data saved: every connection is refused until `restart` brings it back, data whole. */
  down(): Promise<void>;
}

/** What `restart` and `kill` answer on a shared server (REDIS_URL): it is not ours to stop. */
const SHARED_REDIS_REASON = 'REDIS_URL is set: the server is shared, so it cannot be stopped or restarted';

const freePort = async (): Promise<number> => {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
};

/**
 * A redis-server for tests: REDIS_URL when set, else our own `redis-server` from PATH on a free port with
 * persistence off (`--save '' --appendonly no`; `restart` saves explicitly so no data is lost). Tests that stop,
 * restart, kill or flush Redis pass `{ own: true }`: they always get a server of their own, whatever REDIS_URL says,
 * so they run everywhere instead of being skipped.
 */
export async function startRedis(opts: { readonly own?: boolean } = {}): Promise<TestRedis> {
  const shared = opts.own ? undefined : process.env.REDIS_URL;
  if (shared) {
    const port = Number(new URL(shared).port || 6379);
    const unavailable = async () => {
      throw new Error(SHARED_REDIS_REASON);
    };
    return {
      url: shared,
      port,
      owned: false,
      stop: async () => {},
      restart: unavailable,
      kill: unavailable,
      down: unavailable,
    };
  }
  if (spawnSync('redis-server', ['--version']).error) {
    throw new Error('redis-server not found on PATH: install it with `apt-get install -y redis-server`');
  }
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'understudy-redis-'));
  let child: ChildProcess | null = null;

  const spawnServer = async () => {
    const proc = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no'],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    );
    child = proc;
    // Ready once it says so on stdout; its exit first means it could not start.
    await new Promise<void>((resolve, reject) => {
      let seen = '';
      proc.stdout?.on('data', (chunk: Buffer) => {
        seen = (seen + chunk.toString()).slice(-4096);
        if (seen.includes('Ready to accept connections')) resolve();
      });
      proc.once('exit', () => reject(new Error(`redis-server on port ${port} exited at start: ${seen.slice(-300)}`)));
    });
    proc.stdout?.resume();
  };

  const shutdown = async (how: 'SAVE' | 'NOSAVE') => {
    const proc = child;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = once(proc, 'exit');
    const r = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 0, retryStrategy: () => null });
    r.on('error', () => {});
    await r.call('SHUTDOWN', how).catch(() => {});
    r.disconnect();
    await exited;
  };

  await spawnServer();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    owned: true,
    stop: async () => {
      await shutdown('NOSAVE');
      rmSync(dir, { recursive: true, force: true });
    },
    restart: async () => {
      await shutdown('SAVE');
      await spawnServer();
    },
    down: () => shutdown('SAVE'),
    kill: async () => {
      const proc = child;
      if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
      const exited = once(proc, 'exit');
      proc.kill('SIGKILL');
      await exited;
    },
  };
}
