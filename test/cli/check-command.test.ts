import { describe, expect, it } from 'vitest';
import { cliHarness } from '../helpers/cli-harness.js';

// These tests run the built CLI (bin/understudy runs dist/): `npm run build` first (`npm test` does).

interface CheckJson {
  tenants: {
    slug: string;
    collections: { collection: string; variant: string; local: number; upstream: number; drift: number }[];
  }[];
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
});
