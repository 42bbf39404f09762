import { describe, expect, it } from 'vitest';
import { PageProgress } from '../../src/sync/page-progress.js';

const ROUTE = '/partners/{version}/{tenant}/series';
const doc = (id: string, updatedAt: string) => ({ id, updatedAt });
const T1 = '2026-03-01T00:00:00.000Z';
const T2 = '2026-03-02T00:00:00.000Z';

describe('PageProgress', () => {
  it('lets pages through that move past the position they were asked after', () => {
    const p = new PageProgress(ROUTE, 'id');
    p.check([doc('a', T1), doc('b', T1)], null, { updatedAt: T1, id: 'b' });
    p.check([doc('c', T2)], { updatedAt: T1, id: 'b' }, { updatedAt: T2, id: 'c' });
    // Same instant, an id that sorts lower numerically but higher as a string: not proof of a stuck upstream.
    p.check([doc('2', T2)], { updatedAt: T2, id: '10' }, { updatedAt: T2, id: '2' });
  });

  it('throws US_UPSTREAM_STUCK naming the route for the same records twice', () => {
    const p = new PageProgress(ROUTE, 'id');
    p.check([doc('a', T1), doc('b', T2)], null, null);
    expect(() => p.check([doc('a', T1), doc('b', T2)], null, null)).toThrow(
      expect.objectContaining({ code: 'US_UPSTREAM_STUCK', route: ROUTE }),
    );
  });

  it('throws for a last position at or before the one asked after', () => {
    const after = { updatedAt: T2, id: 'c' };
    expect(() => new PageProgress(ROUTE, 'id').check([doc('c', T2)], after, after)).toThrow(/did not advance/);
    expect(() => new PageProgress(ROUTE, 'id').check([doc('a', T1)], after, { updatedAt: T1, id: 'a' })).toThrow(
      /series/,
    );
  });
});
