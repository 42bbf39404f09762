import { describe, expect, it } from 'vitest';
import type { ReadRoutes } from '../../src/sync/discover-routes.js';
import { prerequisitesPending } from '../../src/sync/prerequisites-pending.js';
import { COLLECTIONS, type CollectionSlug, DOCUMENTED_ROUTES } from '../../src/vocabulary/collections.js';

const documented: ReadRoutes = {
  list: new Set(COLLECTIONS.filter((c) => DOCUMENTED_ROUTES[c].includes('list'))),
  get: new Set(COLLECTIONS.filter((c) => DOCUMENTED_ROUTES[c].includes('get'))),
  source: 'openapi',
};
const pendingOf =
  (pending: readonly CollectionSlug[], asked: CollectionSlug[] = []) =>
  async (c: CollectionSlug) => {
    asked.push(c);
    return pending.includes(c);
  };

describe('prerequisitesPending', () => {
  it('holds a collection reached by reference while a collection referencing it is pending', async () => {
    expect(await prerequisitesPending('seasons', COLLECTIONS, documented, pendingOf(['events']))).toBe(true);
    expect(await prerequisitesPending('seasons', COLLECTIONS, documented, pendingOf(['series']))).toBe(false);
  });
  it('ignores prerequisites the tenant does not want', async () => {
    const asked: CollectionSlug[] = [];
    expect(await prerequisitesPending('seasons', ['seasons'], documented, pendingOf(['events'], asked))).toBe(false);
    expect(asked).toEqual([]);
  });
  it('never holds a listable collection, and asks nothing for it', async () => {
    const asked: CollectionSlug[] = [];
    expect(await prerequisitesPending('series', COLLECTIONS, documented, pendingOf(COLLECTIONS, asked))).toBe(false);
    expect(asked).toEqual([]);
  });
});
