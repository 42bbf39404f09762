import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectProblem, type RunningServe, type ServeRig, serveRig } from './serve-rig.js';

// A body `understudy enqueue` refuses is refused by serve with the same message, and nothing is queued. The mirror
// is synced (bulk keys are checked against its custom-attribute definitions); no worker runs.

const CAP = 1024;
let rig: ServeRig;
let serve: RunningServe;
let ei: string;
let org: string;

beforeAll(async () => {
  rig = await serveRig({ writes: { maxBodyBytes: CAP } });
  serve = await rig.serve();
  ei = rig.eventInstanceIds(rig.a)[0] as string;
  org = String(rig.sim.controls.docs(rig.a, 'organizations')[0]?.id);
});
afterAll(async () => {
  await rig?.close();
});

interface Case {
  readonly name: string;
  readonly op: 'patch' | 'bulk';
  readonly path: string;
  readonly body: string;
}

const cases = (): Case[] => {
  const mark = (what: string) => `bad-${what}-${Date.now()}`;
  return [
    {
      name: 'a misspelt field',
      op: 'patch',
      path: `event-instances/${ei}`,
      body: JSON.stringify({ booking: { bookingLinkLable: mark('typo') } }),
    },
    {
      name: 'a body over the cap',
      op: 'patch',
      path: `event-instances/${ei}`,
      body: JSON.stringify({ booking: { bookingLinkLabel: `${mark('big')}${'x'.repeat(CAP)}` } }),
    },
    {
      name: 'a body that is not JSON',
      op: 'patch',
      path: `event-instances/${ei}`,
      body: `{"booking":{"bookingLinkLabel":"${mark('json')}"`,
    },
    {
      name: 'a bulk key not in the mirrored definitions',
      op: 'bulk',
      path: 'organizations/custom-attributes',
      body: JSON.stringify({ ids: [org], set: { [mark('key').replaceAll('-', '_')]: true } }),
    },
  ];
};

/** What `understudy enqueue` prints for a body: its first stderr line that is not a warning, minus its prefix. */
async function enqueueMessage(c: Case): Promise<string> {
  const [collection, id] = c.path.split('/') as [string, string];
  const r = await rig.cli(
    'enqueue',
    ...['--tenant', rig.a, '--op', c.op, '--collection', collection],
    ...(c.op === 'bulk' ? [] : ['--id', id]),
    ...['--body', c.body],
  );
  expect(r.code, r.stderr).toBe(2);
  const line = r.stderr.split('\n').find((l) => l !== '' && !l.includes(': warning: ')) as string;
  expect(line).toMatch(/^understudy enqueue: /);
  return line.replace(/^understudy enqueue: /, '');
}

describe('serve validates a write as enqueue does', () => {
  it('refuses each bad body with the message enqueue prints, and queues nothing', async () => {
    const all = cases();
    const messages = await Promise.all(all.map(enqueueMessage));
    for (const [i, c] of all.entries()) {
      const a = await call(`${serve.url}/partners/2026-02/${rig.a}/${c.path}`, {
        method: 'PATCH',
        token: rig.tokens.writer,
        raw: c.body,
      });
      expect([400, 422], `${c.name}: ${a.text}`).toContain(a.status);
      const p = expectProblem(a, a.status);
      expect({ name: c.name, detail: p.detail }).toEqual({ name: c.name, detail: messages[i] });
    }
    expect(await rig.jobCount()).toBe(0);
  });
});
