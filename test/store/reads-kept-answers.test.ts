import { describe, expect, it, onTestFinished } from 'vitest';
import { openMirror } from '../../src/store/open-mirror.js';
import { openMirrorReads } from '../../src/store/reads/mirror-reads.js';
import { BLANK_SYNC_STATE, PUBLISHED } from '../../src/sync/store-port.js';
import { tenantSlug } from '../../src/vocabulary/ids.js';
import { ENGINES } from '../helpers/engines.js';

// serve keeps a collection's copies and field names between reads: a sync committed by another process (another
// connection) must show in the next read, on either engine.

const T = tenantSlug('acme');
const key = { tenant: T, collection: 'events' as const, variant: PUBLISHED };
const view = {
  tenant: T,
  collection: 'events' as const,
  variant: PUBLISHED,
  locale: null,
  computed: new Set<string>(),
};
const doc = (i: number, extra: Record<string, unknown> = {}) => ({
  id: `ev-${i}`,
  createdAt: `2026-01-0${i}T00:00:00.000Z`,
  updatedAt: `2026-01-0${i}T00:00:00.000Z`,
  title: `Event ${i}`,
  ...extra,
});

describe.each(ENGINES)('reads of a mirror another connection syncs (%s)', (_engine, database) => {
  it('see the new pass and a new field at once', async () => {
    const db = await database();
    const { store } = await openMirror(db);
    onTestFinished(() => store.close());
    await store.write(key, {
      upserts: [doc(1)],
      next: { ...BLANK_SYNC_STATE, lastSuccessAt: '2026-01-04T00:00:00.000Z' },
    });
    const reads = await openMirrorReads(db, { timeoutMs: 2000, connections: 2 });
    onTestFinished(() => reads.close());

    expect((await reads.copies(T, 'events')).variants.get(PUBLISHED)).toBe('2026-01-04T00:00:00.000Z');
    expect(await reads.fieldNames(view)).not.toContain('venueNote');
    // Asked again with nothing changed: the same answers.
    expect((await reads.copies(T, 'events')).variants.get(PUBLISHED)).toBe('2026-01-04T00:00:00.000Z');

    await store.write(key, {
      upserts: [doc(2, { venueNote: 'new field' })],
      next: { ...BLANK_SYNC_STATE, lastSuccessAt: '2026-01-05T00:00:00.000Z' },
    });
    expect((await reads.copies(T, 'events')).variants.get(PUBLISHED)).toBe('2026-01-05T00:00:00.000Z');
    expect(await reads.fieldNames(view)).toContain('venueNote');
    expect((await reads.copies(T, 'series')).variants.size).toBe(0);
  });
});
