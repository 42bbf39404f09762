import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open-mirror.js';
import { searchSqlite, TIER_0_BOUND } from '../../src/store/sqlite/sqlite-search.js';
import { PUBLISHED } from '../../src/sync/store-port.js';
import { type JsonObject, tenantSlug } from '../../src/vocabulary/ids.js';
import { tempDir } from '../helpers/sync-harness.js';

// Tier 0 over a huge match set (issue 39, item 6): past TIER_0_BOUND matches, bm25 ranks only the newest
// TIER_0_BOUND of them (highest doc_id), counted within the tenant and collection asked for, so a word in most
// records never has every match scored. Below the bound, every match is ranked as before.

const key = (tenant: string) => ({ tenant: tenantSlug(tenant), collection: 'events' as const, variant: PUBLISHED });
const event = (id: string, description: string): JsonObject => ({
  id,
  updatedAt: '2026-01-01T00:00:00.000Z',
  title: `Evening ${id}`,
  description,
});
/** Short, and `zeta` four times: bm25 puts these first whenever it scores them. */
const DENSE = 'zeta zeta zeta zeta omega';
const sparse = (i: number) =>
  `zeta with a great many other plain words around it in a long text ${i % 10 === 0 ? 'omega' : ''}`;

describe('search over a huge match set (SQLite)', () => {
  it('ranks tier 0 among the newest matches only, per tenant, and every match below the bound', async () => {
    const path = join(tempDir(), 'm.db');
    const store = await openStore(path);
    try {
      // Oldest first: 5 dense records of beta, 30 dense of acme, then TIER_0_BOUND sparse ones of acme.
      await store.write(key('beta'), { upserts: Array.from({ length: 5 }, (_, i) => event(`b${i}`, DENSE)) });
      await store.write(key('acme'), { upserts: Array.from({ length: 30 }, (_, i) => event(`old${i}`, DENSE)) });
      for (let from = 0; from < TIER_0_BOUND; from += 1000)
        await store.write(key('acme'), {
          upserts: Array.from({ length: 1000 }, (_, k) => event(`new${from + k}`, sparse(from + k))),
        });
      const ids = (text: string, tenant?: string) =>
        searchSqlite(path, { text, limit: 20, ...(tenant ? { tenant } : {}) }).map((h) => h.id);

      // 10,035 matches: the dense old records fall outside the newest TIER_0_BOUND, though bm25 prefers them.
      const all = ids('zeta');
      expect(all).toHaveLength(20);
      expect(all.every((id) => id.startsWith('new'))).toBe(true);
      expect(ids('zeta', 'acme').every((id) => id.startsWith('new'))).toBe(true);
      // The bound counts the tenant's own matches: beta's five, the oldest rows of all, are all found.
      expect(ids('zeta', 'beta').sort()).toEqual(['b0', 'b1', 'b2', 'b3', 'b4']);
      // 1,035 matches, under the bound: bm25 over every one, the dense old records first.
      const few = ids('zeta omega');
      expect(few.slice(0, 20).every((id) => id.startsWith('old') || id.startsWith('b'))).toBe(true);
    } finally {
      await store.close();
    }
  });
});
