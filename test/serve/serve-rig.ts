import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { expect, vi } from 'vitest';
import type { ApiScope } from '../../src/config/config-schema.js';
import { ENV_FILE_ENV } from '../../src/ops/config-reload.js';
import { type Simulator, startSimulator } from '../../src/sim/start-simulator.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';
import { type CliResult, runCli } from '../helpers/run-cli.js';
import { startUnderstudy, type UnderstudyProcess } from '../helpers/understudy-process.js';
import { checkAnswer } from './answer-check.js';

// One rig per test file, made in beforeAll and closed in afterAll: a Redis of its own, a simulator with two tenants
// (limits off), a config whose api.tokens are four tokens of known tenants and scopes (their values in an env file,
// as an operator keeps them), the mirror synced, and `understudy serve` / `understudy worker` as real processes.

/** The rig's tokens: `writer` (tenant A, every scope), `other` (tenant B, every scope), `reader` (every tenant, read). */
export type TokenName = 'writer' | 'other' | 'reader' | 'changes';

const TOKEN_SHAPES: Readonly<Record<TokenName, { readonly tenant: 'A' | 'B' | '*'; readonly scopes: ApiScope[] }>> = {
  writer: { tenant: 'A', scopes: ['write', 'read', 'changes'] },
  other: { tenant: 'B', scopes: ['write', 'read', 'changes'] },
  reader: { tenant: '*', scopes: ['read'] },
  changes: { tenant: '*', scopes: ['changes'] },
};

export const newToken = (): string => `ust_${randomBytes(24).toString('base64url')}`;

export interface RigOptions {
  /** A PostgreSQL URL for the mirror instead of a SQLite file in the rig's folder. */
  readonly database?: string;
  /** Config `api` besides the tokens (rateLimit, …). */
  readonly api?: Record<string, unknown>;
  /** Config `writes`. */
  readonly writes?: Record<string, unknown>;
  /** Run `understudy sync` before the tests (default true). */
  readonly sync?: boolean;
}

/** A running `understudy serve`: its URL and its process. */
export interface RunningServe extends UnderstudyProcess {
  readonly url: string;
}

export interface ServeRig {
  readonly sim: Simulator;
  readonly redis: TestRedis;
  readonly dir: string;
  readonly configPath: string;
  readonly envFile: string;
  readonly env: NodeJS.ProcessEnv;
  readonly prefix: string;
  /** The slugs of the simulator's two tenants. */
  readonly a: string;
  readonly b: string;
  /** Token values by name (as the env file holds them now). */
  readonly tokens: Record<TokenName, string>;
  /** The config's `api.tokens` entries. */
  readonly tokenConfig: readonly Record<string, unknown>[];
  /** Writes the config (to `path`, default the rig's config) with `api` (tokens included) replaced; returns `path`. */
  writeConfig(api?: Record<string, unknown>, path?: string): string;
  /** Writes the env file: tenant keys and the tokens. */
  writeEnvFile(tokens: Record<string, string>): void;
  /** `understudy …args --config <the config>` to completion. */
  cli(...args: string[]): Promise<CliResult>;
  /** `understudy serve` on a free port; resolves once it listens. Stopped by `close` unless stopped before. */
  serve(...args: string[]): Promise<RunningServe>;
  /** `understudy worker`; resolves once its ops endpoint answers ready. */
  worker(): Promise<UnderstudyProcess>;
  /** Jobs of the writes queue in Redis whose data hold `text`. */
  jobsHolding(text: string): Promise<number>;
  /** Every job hash of the writes queue. */
  jobCount(): Promise<number>;
  /** Ids of event instances of a tenant upstream, in id order. */
  eventInstanceIds(tenant: string): string[];
  /** PATCHes of one event instance the simulator answered 2xx. */
  patchesOf(id: string): number;
  close(): Promise<void>;
}

const tokenEnvOf = (name: string) => `SERVE_TOKEN_${name.toUpperCase()}`;

export async function serveRig(opts: RigOptions = {}): Promise<ServeRig> {
  const redis = await startRedis({ own: true });
  const sim = await startSimulator({ port: 0, tenants: 2, records: 4, readLimit: 0, writeLimit: 0, seed: 35 });
  const [ta, tb] = sim.tenants;
  if (!ta || !tb) throw new Error('the simulator has fewer than two tenants');
  const dir = mkdtempSync(join(tmpdir(), 'understudy-serve-'));
  const configPath = join(dir, 'config.json');
  const envFile = join(dir, 'serve.env');
  const prefix = `t-${randomUUID().slice(0, 8)}`;
  const tokens = Object.fromEntries(Object.keys(TOKEN_SHAPES).map((n) => [n, newToken()])) as Record<TokenName, string>;
  const slugOf = (t: 'A' | 'B' | '*') => (t === '*' ? '*' : [t === 'A' ? ta.slug : tb.slug]);
  const tokenEntries = Object.entries(TOKEN_SHAPES).map(([name, s]) => ({
    name,
    tokenEnv: tokenEnvOf(name),
    tenants: slugOf(s.tenant),
    scopes: s.scopes,
  }));
  const writeConfig = (api: Record<string, unknown> = { tokens: tokenEntries, ...opts.api }, path = configPath) => {
    writeFileSync(
      path,
      JSON.stringify({
        baseUrl: sim.url,
        database: opts.database ?? join(dir, 'mirror.db'),
        redis: { prefix },
        worker: { backoffMs: 100 },
        writes: { attempts: 2, ...opts.writes },
        api,
        tenants: [
          { slug: ta.slug, apiKeyEnv: 'SERVE_K0' },
          { slug: tb.slug, apiKeyEnv: 'SERVE_K1' },
        ],
      }),
    );
    return path;
  };
  const writeEnvFile = (values: Record<string, string>) =>
    writeFileSync(
      envFile,
      `${Object.entries({ SERVE_K0: ta.key, SERVE_K1: tb.key, ...values })
        .map(([k, v]) => `${k}=${v}`)
        .join('\n')}\n`,
    );
  writeConfig();
  writeEnvFile(Object.fromEntries(Object.entries(tokens).map(([n, v]) => [tokenEnvOf(n), v])));
  const env: NodeJS.ProcessEnv = { REDIS_URL: redis.url, [ENV_FILE_ENV]: envFile, LOG_LEVEL: 'info' };
  const procs: UnderstudyProcess[] = [];
  const conn = new Redis(redis.url, { maxRetriesPerRequest: 1 });
  conn.on('error', () => {});
  /** The `data` of every job hash of the writes queue (`{prefix}:writes:{id}`, a hash holding `data`). */
  const jobData = async (): Promise<string[]> => {
    const keys = (await conn.keys(`${prefix}:writes:*`)).filter(
      (k) => !k.slice(`${prefix}:writes:`.length).includes(':'),
    );
    const out: string[] = [];
    for (const k of keys) if ((await conn.type(k)) === 'hash') out.push((await conn.hget(k, 'data')) ?? '');
    return out.filter((d) => d !== '');
  };
  const cli = (...args: string[]) => runCli([...args, '--config', configPath], { env, fileScoped: true });
  const rig: ServeRig = {
    sim,
    redis,
    dir,
    configPath,
    envFile,
    env,
    prefix,
    a: ta.slug,
    b: tb.slug,
    tokens,
    tokenConfig: tokenEntries,
    writeConfig,
    writeEnvFile,
    cli,
    async serve(...args) {
      const p = startUnderstudy(['serve', '--config', configPath, '--port', '0', ...args], env, { fileScoped: true });
      procs.push(p);
      const line = await p.waitForLog(/"serve listening"/);
      return { ...p, url: (JSON.parse(line) as { url: string }).url };
    },
    async worker() {
      const p = startUnderstudy(['worker', '--config', configPath, '--http', '0'], env, { fileScoped: true });
      procs.push(p);
      await p.waitForLog(/ops endpoints listening/);
      return p;
    },
    jobsHolding: async (text) => (await jobData()).filter((d) => d.includes(text)).length,
    jobCount: async () => (await jobData()).length,
    eventInstanceIds: (tenant) => sim.controls.docs(tenant, 'event-instances').map((d) => String(d.id)),
    patchesOf: (id) =>
      sim.controls
        .requestLog()
        .filter(
          (e) =>
            e.method === 'PATCH' &&
            String(e.path).split('?')[0]?.endsWith(`/event-instances/${id}`) &&
            e.status >= 200 &&
            e.status < 300,
        ).length,
    async close() {
      for (const p of procs)
        if (p.child.exitCode === null && p.child.signalCode === null) await p.stop('SIGKILL').catch(() => undefined);
      conn.disconnect();
      await sim.close();
      await redis.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  if (opts.sync !== false) {
    const r = await cli('sync');
    if (r.code !== 0) throw new Error(`understudy sync exited ${r.code}: ${r.stderr.slice(-500)}`);
  }
  return rig;
}

/** An answer read whole: status, headers and the body parsed (JSON or problem+json), or its text. */
export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: unknown;
  readonly text: string;
}

/** One request to serve, with a token (Bearer, unless `auth` gives the whole Authorization header). */
export async function call(
  url: string,
  init: {
    readonly method?: string;
    readonly token?: string;
    readonly auth?: string;
    readonly body?: unknown;
    readonly raw?: string;
    readonly headers?: Record<string, string>;
  } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...init.headers };
  if (init.auth !== undefined) headers.authorization = init.auth;
  else if (init.token !== undefined) headers.authorization = `Bearer ${init.token}`;
  const body = init.raw ?? (init.body === undefined ? undefined : JSON.stringify(init.body));
  if (body !== undefined) headers['content-type'] = 'application/json';
  const method = init.method ?? 'GET';
  const res = await fetch(url, { method, headers, ...(body !== undefined ? { body } : {}) });
  const text = await res.text();
  // Every answer a test receives fits the OpenAPI document.
  checkAnswer(method, new URL(url).pathname, res.status, res.headers, text === '' ? undefined : text);
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: the text as it is
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}

/** Asserts an RFC 9457 problem: problem+json, the status in the body, a US_* code, no stack trace. */
export function expectProblem(a: Answer, status: number): Record<string, unknown> {
  expect(a.status, a.text).toBe(status);
  expect(a.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  const p = a.body as Record<string, unknown>;
  expect(p).toMatchObject({ status, type: expect.any(String), title: expect.any(String), detail: expect.any(String) });
  expect(p.code).toMatch(/^US_[A-Z0-9_]+$/);
  expect(a.text).not.toMatch(/\n\s+at |node:internal|"stack"/);
  return p;
}

/** One Server-Sent Event of the change stream: its id and its data parsed. */
export interface StreamEvent {
  readonly id: string;
  readonly data: { readonly seq: number } & Record<string, unknown>;
}

/** An open `/v1/changes/stream`: the events so far, a wait for one, and a close. */
export interface OpenStream {
  readonly status: number;
  readonly headers: Headers;
  readonly events: StreamEvent[];
  /** Resolves once an event matches (polled as events arrive). */
  until(match: (e: StreamEvent) => boolean, timeoutMs?: number): Promise<StreamEvent>;
  close(): void;
  /** Resolves when the server ends the stream. */
  readonly ended: Promise<void>;
}

const never = async (): Promise<StreamEvent> => {
  throw new Error('the stream was refused: no event will come');
};

/** Opens the change stream with a token, resuming after `lastEventId` when given. */
export async function openStream(url: string, token: string, lastEventId?: number, query = ''): Promise<OpenStream> {
  const ctl = new AbortController();
  const res = await fetch(`${url}/v1/changes/stream${query}`, {
    headers: {
      authorization: `Bearer ${token}`,
      accept: 'text/event-stream',
      ...(lastEventId !== undefined ? { 'last-event-id': String(lastEventId) } : {}),
    },
    signal: ctl.signal,
  });
  const path = new URL(`${url}/v1/changes/stream`).pathname;
  const events: StreamEvent[] = [];
  if (res.status !== 200) {
    // A refusal is a whole problem+json answer: checked against the document as it is.
    const text = await res.text();
    checkAnswer('GET', path, res.status, res.headers, text);
    return {
      status: res.status,
      headers: res.headers,
      events,
      ended: Promise.resolve(),
      until: never,
      close: () => {},
    };
  }
  checkAnswer('GET', path, res.status, res.headers, '');
  /** The first event that did not fit the document: `until` throws it. */
  let misfit: Error | undefined;
  const ended = (async () => {
    if (!res.body) return;
    const decoder = new TextDecoder();
    let buf = '';
    try {
      for await (const chunk of res.body) {
        buf += decoder.decode(chunk as Uint8Array, { stream: true });
        let cut = buf.indexOf('\n\n');
        while (cut >= 0) {
          const block = buf.slice(0, cut);
          buf = buf.slice(cut + 2);
          const fields = Object.fromEntries(
            block
              .split('\n')
              .filter((l) => l !== '' && !l.startsWith(':'))
              .map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1).replace(/^ /, '')]),
          ) as Record<string, string>;
          if (fields.data !== undefined) {
            const data = JSON.parse(fields.data) as StreamEvent['data'];
            // Each event's data is a change as the document describes it (one row of GET /v1/changes).
            try {
              checkAnswer('GET', '/v1/changes', 200, { 'content-type': 'application/json' }, [data]);
            } catch (err) {
              misfit ??= err as Error;
            }
            events.push({ id: fields.id ?? '', data });
          }
          cut = buf.indexOf('\n\n');
        }
      }
    } catch {
      // aborted by close(), or the server went away
    }
  })();
  return {
    status: res.status,
    headers: res.headers,
    events,
    ended,
    async until(match, timeoutMs = 20_000) {
      let hit: StreamEvent | undefined;
      await vi.waitFor(
        () => {
          hit = events.find(match);
          expect(hit, `no matching event among ${events.length}`).toBeDefined();
        },
        { timeout: timeoutMs, interval: 25 },
      );
      if (misfit) throw misfit;
      return hit as StreamEvent;
    },
    close: () => ctl.abort(),
  };
}
