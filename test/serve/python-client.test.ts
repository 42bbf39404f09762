import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect } from '../helpers/run-cli.js';
import { checkAnswer } from './answer-check.js';
import { call, type RunningServe, type ServeRig, serveRig } from './serve-rig.js';

// An app in another language: a Python 3 script using the standard library only (fixtures/python-client.py)
// writes through serve, to a real worker and the simulator, and follows the change stream. python3 is required
// (.ci/run installs it): without it this test fails, it is never skipped.

const SCRIPT = fileURLToPath(new URL('./fixtures/python-client.py', import.meta.url));

let rig: ServeRig;
let serve: RunningServe;

beforeAll(async () => {
  rig = await serveRig();
  [serve] = await Promise.all([rig.serve(), rig.worker()]);
});
afterAll(async () => {
  await rig?.close();
});

interface Seen {
  first: { status: number; location: string | null; body: { id: string; state: string; links: { self: string } } };
  again: { status: number; body: { id: string; state: string } };
  followed: { status: number; body: Record<string, unknown> };
  waited: { status: number; location: string | null; applied: string | null; body: Record<string, unknown> };
  change: { id: string; change: Record<string, unknown> } | null;
}

describe('a Python client (urllib only) of serve', () => {
  it('enqueues with an Idempotency-Key, repeats it, follows it, waits with Prefer: wait, and sees its change streamed', async () => {
    const python = spawnSync('python3', ['--version']);
    if (python.error)
      throw new Error(`python3 is not installed (apt-get install -y python3; .ci/run does): ${python.error.message}`);
    const ei = rig.eventInstanceIds(rig.a)[1] as string;
    const key = `py-${Date.now()}`;
    const child = spawn('python3', [SCRIPT], {
      env: {
        PATH: process.env.PATH,
        SERVE_URL: serve.url,
        SERVE_TOKEN: rig.tokens.writer,
        TENANT: rig.a,
        EVENT_INSTANCE: ei,
        KEY: key,
      },
      timeout: 50_000,
    });
    const r = await collect(child);
    expect(r.code, r.stderr).toBe(0);
    const seen = JSON.parse(r.stdout.trim().split('\n').pop() as string) as Seen;
    const id = seen.first.body.id;
    // What Python received fits the OpenAPI document too.
    const path = `/partners/2026-02/${rig.a}/event-instances/${ei}`;
    const json = (location?: string | null) => ({
      'content-type': 'application/json',
      location: location ?? undefined,
    });
    checkAnswer('PATCH', path, seen.first.status, json(seen.first.location), seen.first.body);
    checkAnswer('PATCH', path, seen.again.status, json(`/v1/writes/${id}`), seen.again.body);
    checkAnswer('GET', `/v1/writes/${id}`, seen.followed.status, json(), seen.followed.body);
    checkAnswer('PATCH', path, seen.waited.status, json(seen.waited.location), seen.waited.body);

    expect(seen.first.status).toBe(202);
    expect(seen.first.body).toEqual({ id, state: expect.any(String), links: { self: `/v1/writes/${id}` } });
    expect(seen.first.location).toBe(`/v1/writes/${id}`);
    expect(seen.again).toEqual({ status: 200, body: expect.objectContaining({ id }) });
    expect(seen.followed.status).toBe(200);
    expect(seen.followed.body).toMatchObject({ jobId: id, state: 'ok', tenant: rig.a });
    expect(JSON.stringify(seen.followed.body)).toContain('"writer"');

    // Prefer: wait answers as the upstream did: 200 and the record, as the mirror now holds it.
    expect(seen.waited.status).toBe(200);
    expect(seen.waited.applied).toBe('wait=20');
    expect(seen.waited.body).toMatchObject({ id: ei, booking: { bookingLinkLabel: `Python waited ${key}` } });
    const waitedJob = seen.waited.location?.split('/').pop();
    expect(seen.change).toEqual({
      id: String(seen.change?.change.seq),
      change: expect.objectContaining({
        tenant: rig.a,
        collection: 'event-instances',
        id: ei,
        kind: 'update',
        source: 'write',
        run_id: waitedJob,
      }),
    });

    // One PATCH upstream for the key sent twice, one for the waited write; the upstream holds the last value.
    expect(rig.patchesOf(ei)).toBe(2);
    const upstream = rig.sim.controls.docs(rig.a, 'event-instances').find((d) => String(d.id) === ei);
    expect(upstream?.booking).toMatchObject({ bookingLinkLabel: `Python waited ${key}` });
    expect(await rig.jobsHolding(`Python ${key}`)).toBe(1);
    const shown = await call(`${serve.url}/v1/writes/${waitedJob}`, { token: rig.tokens.reader });
    expect(shown.body).toMatchObject({ state: 'ok' });
  });
});
