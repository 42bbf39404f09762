import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runCli } from '../helpers/run-cli.js';
import { type Answer, call, expectProblem, newToken, type RunningServe, type ServeRig, serveRig } from './serve-rig.js';

// Every route of serve refuses a request without a token, with a wrong one (401), with a token of another tenant
// or without the scope (403), and queues nothing for it. No worker runs: the one write queued (by the CLI, in
// beforeAll) stays queued, so "nothing queued" is "still one job".

let rig: ServeRig;
let serve: RunningServe;
let jobId: string;
const MARK = `refused-${Date.now()}`;

beforeAll(async () => {
  rig = await serveRig({ sync: false });
  serve = await rig.serve();
  const ei = rig.eventInstanceIds(rig.a)[0] as string;
  const r = await rig.cli(
    'enqueue',
    ...['--tenant', rig.a, '--op', 'patch', '--collection', 'event-instances', '--id', ei],
    ...['--body', '{"booking":{"bookingLinkLabel":"queued by the CLI"}}'],
  );
  expect(r.code, r.stderr).toBe(0);
  jobId = r.stdout.trim().split('\n').pop() as string;
});
afterAll(async () => {
  await rig?.close();
});

/** The spec's write routes (docs/writes.md), each at its upstream path under a tenant. */
const WRITE_ROUTES: readonly (readonly [string, string])[] = [
  ['POST', 'series'],
  ['POST', 'posts'],
  ['POST', 'blogs'],
  ['POST', 'media'],
  ['POST', 'forms'],
  ['PUT', 'seasons/1'],
  ['PUT', 'organizations/1'],
  ['PUT', 'media/1'],
  ['PUT', 'custom-attributes/1'],
  ['PUT', 'redirects/1'],
  ['PATCH', 'event-instances/1'],
  ['DELETE', 'event-instances/1'],
  ['PATCH', 'organizations/custom-attributes'],
  ['PATCH', 'series/custom-attributes'],
  ['PATCH', 'blogs/theme-settings'],
];

/** A request of every route with `auth` (a whole Authorization header, or none): [route, answer]. */
async function everyRoute(
  auth: (route: string) => string | undefined,
  tenant: () => string,
): Promise<[string, Answer][]> {
  const out: [string, Answer][] = [];
  const send = async (route: string, method: string, path: string, body?: unknown) => {
    const a = auth(route);
    out.push([
      route,
      await call(`${serve.url}${path}`, {
        method,
        ...(a !== undefined ? { auth: a } : {}),
        ...(body !== undefined ? { body } : {}),
      }),
    ]);
  };
  for (const [method, rest] of WRITE_ROUTES) {
    const route = `${method} /partners/2026-02/{tenant}/${rest}`;
    await send(route, method, `/partners/2026-02/${tenant()}/${rest}`, method === 'DELETE' ? undefined : { MARK });
  }
  await send('GET /v1/writes/{id}', 'GET', `/v1/writes/${jobId}`);
  await send('GET /v1/writes', 'GET', `/v1/writes?state=failed&tenant=${tenant()}`);
  await send('POST /v1/writes/{id}/retry', 'POST', `/v1/writes/${jobId}/retry`);
  await send('GET /v1/changes', 'GET', `/v1/changes?since=0&tenant=${tenant()}`);
  await send('GET /v1/changes/stream', 'GET', `/v1/changes/stream?tenant=${tenant()}`);
  return out;
}

const statuses = (answers: [string, Answer][]) => Object.fromEntries(answers.map(([r, a]) => [r, a.status]));
const all = (answers: [string, Answer][], status: number) => Object.fromEntries(answers.map(([r]) => [r, status]));

describe('serve: 401 and 403 on every route', () => {
  it('answers 401 with WWW-Authenticate: Bearer to no token and to a wrong one, and queues nothing', async () => {
    const wrong = `${rig.tokens.writer.slice(0, -4)}Zq9x`;
    for (const auth of [undefined, `Bearer ${wrong}`, `users API-Key ${wrong}`, 'Basic dXNlcjpwYXNz']) {
      const answers = await everyRoute(
        () => auth,
        () => rig.a,
      );
      expect(answers).toHaveLength(20);
      expect(statuses(answers), String(auth)).toEqual(all(answers, 401));
      for (const [, a] of answers) {
        expectProblem(a, 401);
        expect(a.headers.get('www-authenticate')).toMatch(/^Bearer/);
        expect(a.text).not.toContain(wrong);
      }
    }
    expect(await rig.jobsHolding(MARK)).toBe(0);
    expect(await rig.jobCount()).toBe(1);
  });

  it('answers 403 to a token of another tenant and to a token without the scope, and queues nothing', async () => {
    // `other` holds every scope but only tenant B; `reader` holds every tenant but only `read`, `changes` only
    // `changes`: each route is asked with the token that lacks what it needs.
    const otherTenant = await everyRoute(
      () => `Bearer ${rig.tokens.other}`,
      () => rig.a,
    );
    expect(statuses(otherTenant)).toEqual(all(otherTenant, 403));
    for (const [, a] of otherTenant) expect(expectProblem(a, 403).detail).toMatch(/does not reach tenant/);
    const noScope = await everyRoute(
      (route) => `Bearer ${/^GET \/v1\/writes/.test(route) ? rig.tokens.changes : rig.tokens.reader}`,
      () => rig.a,
    );
    expect(statuses(noScope)).toEqual(all(noScope, 403));
    for (const [, a] of noScope) expect(expectProblem(a, 403).detail).toMatch(/does not hold the scope/);
    expect(await rig.jobsHolding(MARK)).toBe(0);
    expect(await rig.jobCount()).toBe(1);
  });

  it('takes the upstream scheme `users API-Key <token>` as it takes Bearer', async () => {
    const write = await call(`${serve.url}/v1/writes/${jobId}`, { auth: `users API-Key ${rig.tokens.writer}` });
    expect(write.status, write.text).toBe(200);
    expect(write.body).toMatchObject({ jobId, tenant: rig.a });
    const bearer = await call(`${serve.url}/v1/writes/${jobId}`, { token: rig.tokens.writer });
    expect(bearer.body).toEqual(write.body);
  });
});

describe('serve: tokens at start and on SIGHUP', () => {
  const refusedStart = async (tokens: unknown[]) => {
    const path = rig.writeConfig({ tokens }, join(rig.dir, `refused-${tokens.length}.json`));
    return runCli(['serve', '--config', path, '--port', '0'], { env: rig.env, fileScoped: true });
  };

  it('refuses to start (exit 2, one stderr line naming the entry) with no token, and with a token variable unset', async () => {
    const unset = { name: 'late', tokenEnv: 'SERVE_TOKEN_NEVER_SET', tenants: '*', scopes: ['read'] };
    const [none, late] = await Promise.all([refusedStart([]), refusedStart([rig.tokenConfig[0], unset])]);
    expect(none.code, none.stderr).toBe(2);
    expect(none.stderr.trim().split('\n')).toEqual([expect.stringMatching(/api\.tokens\b/)]);
    expect(late.code, late.stderr).toBe(2);
    expect(late.stderr.trim().split('\n')).toEqual([expect.stringMatching(/api\.tokens\.1\b.*SERVE_TOKEN_NEVER_SET/)]);
    for (const v of Object.values(rig.tokens)) expect(none.stderr + late.stderr).not.toContain(v);
  });

  it('takes a token rotated in the env file on SIGHUP, without a restart: the old one 401, the new one passes', async () => {
    const old = rig.tokens.writer;
    const rotated = newToken();
    const list = (token: string) => call(`${serve.url}/v1/writes?state=failed`, { token });
    expect((await list(old)).status).toBe(200);
    rig.writeEnvFile({
      SERVE_TOKEN_WRITER: rotated,
      SERVE_TOKEN_OTHER: rig.tokens.other,
      SERVE_TOKEN_READER: rig.tokens.reader,
      SERVE_TOKEN_CHANGES: rig.tokens.changes,
    });
    serve.child.kill('SIGHUP');
    await vi.waitFor(async () => expect((await list(rotated)).status).toBe(200), { timeout: 10_000, interval: 50 });
    const refused = await list(old);
    expectProblem(refused, 401);
    expect(refused.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(serve.child.exitCode).toBeNull();
    expect(serve.log()).toMatch(/serve tokens reloaded/);
    for (const v of [old, rotated]) expect(serve.log()).not.toContain(v);
  });
});
