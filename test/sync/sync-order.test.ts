import { describe, expect, it } from 'vitest';
import type { ReadRoutes } from '../../src/sync/discover-routes.js';
import { prerequisitesOf, syncOrder } from '../../src/sync/sync-tenant.js';
import { COLLECTIONS, type CollectionSlug, DOCUMENTED_ROUTES } from '../../src/vocabulary/collections.js';

const documented: ReadRoutes = {
  list: new Set(COLLECTIONS.filter((c) => DOCUMENTED_ROUTES[c].includes('list'))),
  get: new Set(COLLECTIONS.filter((c) => DOCUMENTED_ROUTES[c].includes('get'))),
  source: 'openapi',
};
const full: ReadRoutes = { list: new Set(COLLECTIONS), get: new Set(COLLECTIONS), source: 'openapi' };

describe('sync order and prerequisites', () => {
  it('orders listed collections first, then embedded ones, then those fetched by id', () => {
    const order = syncOrder(COLLECTIONS, documented);
    const at = (c: CollectionSlug) => order.indexOf(c);
    expect(at('events')).toBeLessThan(at('event-instances'));
    expect(at('event-instances')).toBeLessThan(at('venues'));
    expect(at('events')).toBeLessThan(at('seasons'));
  });

  it('names what a collection reached by reference waits for, never forming a cycle', () => {
    expect(prerequisitesOf('event-instances', documented)).toEqual(['events']);
    expect(prerequisitesOf('venues', documented).sort()).toEqual(['event-instances', 'events']);
    expect(prerequisitesOf('seasons', documented)).toEqual(['events']);
    expect(prerequisitesOf('series', documented)).toEqual([]);
    expect(prerequisitesOf('pages', documented)).toEqual([]);
    for (const c of COLLECTIONS) expect(prerequisitesOf(c, full)).toEqual([]);
  });
});
