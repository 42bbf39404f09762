import { describe, expect, it, vi } from 'vitest';
import type { Change } from '../../src/changes/change-log-port.js';
import { cliHarness } from '../helpers/cli-harness.js';
import { collect, spawnCli } from '../helpers/run-cli.js';

// These tests run the built CLI (bin/understudy runs dist/): `npm run build` first (`npm test` does).

async function setup() {
  const h = await cliHarness();
  const changes = async (...args: string[]): Promise<Change[]> => {
    const r = await h.cli('changes', '--json', ...args);
    expect(r.code, r.stderr).toBe(0);
    return JSON.parse(r.stdout) as Change[];
  };
  return { ...h, changes };
}

describe('understudy changes', () => {
  it('prints the log in seq order, resumes exactly after --since, filters, and prints one object a line with --nl', async () => {
    const h = await setup();
    expect((await h.cli('sync', '--collection', 'events', '--collection', 'series')).code).toBe(0);
    const all = await h.changes();
    expect(all.length).toBe(
      h.sim.controls.docs(h.t.slug, 'events').length + h.sim.controls.docs(h.t.slug, 'series').length,
    );
    expect(all.map((c) => c.seq)).toEqual([...all.map((c) => c.seq)].sort((a, b) => a - b));
    const mid = all[7]?.seq ?? 0;
    expect((await h.changes('--since', String(mid))).map((c) => c.seq)).toEqual(all.slice(8).map((c) => c.seq));
    expect((await h.changes('--since', String(mid), '--limit', '3')).map((c) => c.seq)).toEqual(
      all.slice(8, 11).map((c) => c.seq),
    );
    const m = h.sim.controls.mutate({ tenant: h.t.slug, collection: 'events', edits: 2, deletes: 1 });
    expect((await h.cli('sync', '--collection', 'events', '--full')).code).toBe(0);
    const last = all.at(-1)?.seq ?? 0;
    const tail = await h.changes('--since', String(last));
    expect(tail.map((c) => `${c.kind} ${c.id}`).sort()).toEqual(
      [...m.edited.map((id) => `update ${id}`), `delete ${m.deleted[0]}`].sort(),
    );
    expect((await h.changes('--kind', 'delete')).map((c) => c.id)).toEqual(m.deleted);
    expect(await h.changes('--collection', 'series', '--since', String(last))).toEqual([]);
    const nl = await h.cli('changes', '--nl', '--since', String(last));
    expect(
      nl.stdout
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as Change).seq),
    ).toEqual(tail.map((c) => c.seq));
    const text = await h.cli('changes', '--since', String(last), '--kind', 'update');
    expect(text.stdout).toContain(`update\t${h.t.slug}/events/${m.edited[0]}`);
  });

  it('tells an unpublished record from a deleted one: delete with reason unpublished, then revive; --reason filters', async () => {
    const h = await setup();
    expect((await h.cli('sync', '--collection', 'series')).code).toBe(0);
    const last = (await h.changes()).at(-1)?.seq ?? 0;
    const call = async (method: string, id: string, body?: object) => {
      const res = await fetch(`${h.sim.url}/partners/2026-02/${h.t.slug}/series/${id}`, {
        method,
        headers: { authorization: `users API-Key ${h.t.key}`, 'content-type': 'application/json' },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      expect(res.status).toBe(200);
    };
    const patch = (id: string, status: string) => call('PATCH', id, { _status: status });
    const [one, two] = h.sim.controls.docs(h.t.slug, 'series');
    const id = String(one?.id);
    const gone = String(two?.id);
    await patch(id, 'draft');
    await call('DELETE', gone);
    expect((await h.cli('sync', '--collection', 'series', '--full')).code).toBe(0);
    const tail = await h.changes('--since', String(last));
    expect(tail.map((c) => `${c.kind}:${c.reason} ${c.id}`).sort()).toEqual(
      [`delete:unpublished ${id}`, `delete:deleted ${gone}`].sort(),
    );
    expect((await h.changes('--reason', 'unpublished')).map((c) => c.id)).toEqual([id]);
    expect((await h.changes('--reason', 'deleted')).map((c) => c.id)).toEqual([gone]);
    const text = await h.cli('changes', '--since', String(last), '--reason', 'unpublished');
    expect(text.stdout).toContain(`delete	${h.t.slug}/series/${id}	(unpublished)`);
    await patch(id, 'published');
    expect((await h.cli('sync', '--collection', 'series')).code).toBe(0);
    const after = (await h.changes('--since', String(last))).filter((c) => c.id === id);
    expect(after.map((c) => (c.kind === 'delete' ? `delete:${c.reason}` : c.kind))).toEqual([
      'delete:unpublished',
      'revive',
    ]);
    expect(after[1]?.reason).toBeNull();
  });

  it('--follow prints changes as they commit', async () => {
    const h = await setup();
    expect((await h.cli('sync', '--collection', 'venues')).code).toBe(0);
    const last = (await h.changes()).at(-1)?.seq ?? 0;
    const follow = spawnCli(['changes', '--config', h.config, '--follow', '--nl', '--since', String(last)], {
      env: h.env,
    });
    const done = collect(follow);
    let out = '';
    follow.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
    });
    const m = h.sim.controls.mutate({ tenant: h.t.slug, collection: 'venues', edits: 2 });
    expect((await h.cli('sync', '--collection', 'venues')).code).toBe(0);
    await vi.waitFor(() => expect(m.edited.every((id) => out.includes(id))).toBe(true), { timeout: 10_000 });
    follow.kill('SIGTERM');
    expect((await done).code).toBe(0);
  });

  it('refuses bad flags and a bad changes.retainDays with exit 2, naming them', async () => {
    const h = await setup();
    expect((await h.cli('changes', '--since', '-1')).code).toBe(2);
    expect((await h.cli('changes', '--kind', 'moved')).stderr).toContain('--kind moved');
    expect((await h.cli('changes', '--reason', 'gone')).stderr).toContain('--reason gone');
    const noDelete = await h.cli('changes', '--kind', 'insert', '--reason', 'deleted');
    expect(noDelete.code).toBe(2);
    expect(noDelete.stderr).toContain('--reason');
    expect((await h.cli('changes', '--json', '--nl')).code).toBe(2);
    h.write({ changes: { retainDays: -3 } });
    const bad = await h.cli('changes');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('changes.retainDays');
  });
});
