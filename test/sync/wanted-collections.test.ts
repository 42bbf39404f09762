import { describe, expect, it } from 'vitest';
import { wantedCollections } from '../../src/sync/wanted-collections.js';
import { COLLECTIONS } from '../../src/vocabulary/collections.js';

describe('wantedCollections', () => {
  it('is the collections the tenant names, in its order', () => {
    expect(wantedCollections({ collections: ['venues', 'series'] })).toEqual(['venues', 'series']);
  });
  it('is every collection when the tenant names none', () => {
    expect(wantedCollections({})).toEqual(COLLECTIONS);
    expect(wantedCollections({ collections: [] })).toEqual(COLLECTIONS);
  });
});
