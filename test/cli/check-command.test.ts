import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { cliHarness } from '../helpers/cli-harness.js';

// These tests run the built CLI (bin/understudy runs dist/): `npm run build` first (`npm test` does).

interface CheckJson {
  tenants: {
    slug: string;
    requests?: number;
    collections: {
      collection: string;
      variant: string;
      local: number;
      upstream: number;
      drift: number;
      missing?: number;
      extra?: number;
      stale?: number;
      missingIds?: string[];
      extraIds?: string[];
      staleIds?: string[];
    }[];
  }[];
}

interface Change {
  id: string;
  kind: string;
}

describe('understudy check', () => {
  it('finds a hard delete and a late arrival an incremental run missed; --repair fixes both', async () => {
    const { sim, t, cli } = await cliHarness({}, { collections: ['media', 'forms'] });
    const check = async (...args: string[]) => {
      const r = await cli('check', '--json', ...args);
      return { code: r.code, json: JSON.parse(r.stdout) as CheckJson & { after?: CheckJson['tenants'] } };
    };
    expect((await cli('sync')).code).toBe(0);
    const clean = await check();
    expect(clean.code).toBe(0);
    expect(clean.json.tenants[0]?.collections.map((c) => [c.collection, c.variant, c.drift])).toEqual([
      ['media', 'published', 0],
      ['forms', 'published', 0],
    ]);

    sim.controls.mutate({ tenant: t.slug, collection: 'media', deletes: 2 });
    const late = sim.controls.mutate({
      tenant: t.slug,
      collection: 'forms',
      creates: 1,
      updatedAt: '2025-03-01T00:00:00.000Z',
    });
    expect((await cli('sync')).code).toBe(0);
    const drifting = await check();
    expect(drifting.code).toBe(1);
    const byName = new Map(drifting.json.tenants[0]?.collections.map((c) => [c.collection, c]));
    expect(byName.get('media')).toMatchObject({ drift: -2, upstream: sim.controls.docs(t.slug, 'media').length });
    expect(byName.get('forms')).toMatchObject({ drift: 1, upstream: sim.controls.docs(t.slug, 'forms').length });

    const repaired = await check('--repair');
    expect(repaired.code).toBe(0);
    expect(repaired.json.after?.[0]?.collections.every((c) => c.drift === 0)).toBe(true);
    expect((await check()).code).toBe(0);
    const log = JSON.parse((await cli('changes', '--json', '--kind', 'insert', '--collection', 'forms')).stdout) as {
      id: string;
    }[];
    expect(log.map((c) => c.id)).toContain(late.created[0]);
    const status = JSON.parse((await cli('status', '--json')).stdout) as {
      tenants: { lastCheck: { drifting: number } | null }[];
    };
    expect(status.tenants[0]?.lastCheck?.drifting).toBe(0);
  });

  it('finds a row deleted and one inserted by hand when the counts agree, and --repair fixes both and a stale row', async () => {
    const { t, cli, database, sim } = await cliHarness({}, { collections: ['forms'] });
    const check = async (...args: string[]) => {
      const r = await cli('check', '--json', ...args);
      return {
        code: r.code,
        stderr: r.stderr,
        json: JSON.parse(r.stdout) as CheckJson & { after?: CheckJson['tenants'] },
      };
    };
    const forms = (c: CheckJson['tenants']) => c[0]?.collections.find((x) => x.collection === 'forms');
    expect((await cli('sync', '--full')).code).toBe(0);
    expect((await check()).code).toBe(0);

    // One row deleted, one extra inserted as a copy of another (its seen_run and mirrored_at too): counts agree.
    const db = new Database(database);
    const live = () =>
      db
        .prepare('SELECT id FROM forms WHERE tenant = ? AND deleted_at IS NULL ORDER BY id')
        .all(t.slug)
        .map((r) => (r as { id: string }).id);
    const ids = live();
    const gone = ids[0] as string;
    const ahead = ids[1] as string;
    const extra = 'ba5e0000000000000000e1a1';
    const cols = (db.prepare('PRAGMA table_info(forms)').all() as { name: string }[]).map((c) => c.name);
    const sel = cols.map((c) => (c === 'id' ? '@extra' : c === 'doc' ? "json_set(doc, '$.id', @extra)" : c)).join(',');
    db.prepare(`INSERT INTO forms (${cols.join(',')}) SELECT ${sel} FROM forms WHERE tenant = @t AND id = @source`).run(
      {
        extra,
        source: ids.at(-1),
        t: t.slug,
      },
    );
    db.prepare('DELETE FROM forms WHERE tenant = ? AND id = ?').run(t.slug, gone);
    // And one row newer than the upstream's record: a full pass alone keeps it (newer wins).
    db.prepare("UPDATE forms SET updated_at = '2099-01-01T00:00:00.000Z' WHERE tenant = ? AND id = ?").run(
      t.slug,
      ahead,
    );
    db.close();

    // The counts-only check cannot see any of it.
    expect((await check('--counts')).code).toBe(0);
    const drifting = await check();
    expect(drifting.code).toBe(1);
    expect(forms(drifting.json.tenants)).toMatchObject({
      drift: 0,
      missing: 1,
      extra: 1,
      stale: 1,
      missingIds: [gone],
      extraIds: [extra],
      staleIds: [ahead],
    });
    expect(drifting.json.tenants[0]?.requests).toBe(1 + Math.ceil(sim.controls.docs(t.slug, 'forms').length / 20));
    const text = await cli('check');
    expect(text.code).toBe(1);
    expect(text.stdout).toContain(`forms missing: ${gone}`);
    expect(text.stdout).toContain(`forms extra: ${extra}`);
    const shown = await cli('status');
    expect(shown.stdout).toContain('drift in forms 0 (1 missing, 1 extra, 1 stale)');

    const repaired = await check('--repair');
    expect(repaired.code).toBe(0);
    expect(forms(repaired.json.after ?? [])).toMatchObject({ drift: 0, missing: 0, extra: 0, stale: 0 });
    const after = new Database(database, { readonly: true });
    const state = (id: string) =>
      (after.prepare('SELECT deleted_at, updated_at FROM forms WHERE tenant = ? AND id = ?').get(t.slug, id) ??
        null) as {
        deleted_at: string | null;
        updated_at: string;
      } | null;
    expect(state(gone)?.deleted_at).toBeNull();
    expect(state(extra)?.deleted_at).not.toBeNull();
    expect(state(ahead)).toMatchObject({ deleted_at: null });
    expect(state(ahead)?.updated_at).not.toBe('2099-01-01T00:00:00.000Z');
    after.close();
    expect((await check()).code).toBe(0);
    const log = JSON.parse((await cli('changes', '--json', '--collection', 'forms')).stdout) as Change[];
    expect(log.filter((c) => c.id === ahead).map((c) => c.kind)).toEqual(['insert', 'delete', 'revive']);
    expect(log.filter((c) => c.id === extra).map((c) => c.kind)).toEqual(['insert', 'delete']);
    const status = JSON.parse((await cli('status', '--json')).stdout) as {
      tenants: { lastCheck: { drifting: number; collections: { missing: number | null }[] } | null }[];
    };
    expect(status.tenants[0]?.lastCheck).toMatchObject({ drifting: 0, collections: [{ missing: 0 }] });
  });
});
