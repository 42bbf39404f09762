import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openMirror } from '../../src/store/open-mirror.js';
import { BLANK_SYNC_STATE, PUBLISHED, type SyncState } from '../../src/sync/store-port.js';
import type { WatchStatusRow } from '../../src/sync/watch-port.js';
import { tenantSlug } from '../../src/vocabulary/ids.js';
import { manualClock } from '../helpers/manual-clock.js';
import { testDatabase } from '../helpers/postgres.js';
import { tempDir } from '../helpers/sync-harness.js';

const engines = [
  ['SQLite', async () => join(tempDir(), 'mirror.db')],
  ['PostgreSQL', () => testDatabase()],
] as const;

describe.each(engines)('watch tables on %s', (_name, database) => {
  it('gives each tenant one watcher until its lease expires, keeps and shows the status rows', async () => {
    const clock = manualClock(Date.parse('2026-11-26T12:00:00.000Z'));
    const mirror = await openMirror(await database(), clock);
    try {
      const [a, b, c] = ['a', 'b', 'c'].map((s) => tenantSlug(s)) as [never, never, never];
      expect(await mirror.watch.claimWatch([a, b], 'host-1', 30_000)).toEqual(new Set([a, b]));
      // Another host gets only what nobody holds.
      expect(await mirror.watch.claimWatch([a, b, c], 'host-2', 30_000)).toEqual(new Set([c]));
      // The holder renews; the other still gets nothing of it.
      clock.advance(20_000);
      expect(await mirror.watch.claimWatch([a, b], 'host-1', 30_000)).toEqual(new Set([a, b]));
      clock.advance(20_000);
      expect(await mirror.watch.claimWatch([a, b], 'host-2', 30_000)).toEqual(new Set());
      // host-1 dies (no renewal): after its lease, host-2 takes over.
      clock.advance(31_000);
      expect(await mirror.watch.claimWatch([a, b], 'host-2', 30_000)).toEqual(new Set([a, b]));
      // A clean stop hands over at once.
      await mirror.watch.releaseWatch('host-2');
      expect(await mirror.watch.claimWatch([a, b, c], 'host-1', 30_000)).toEqual(new Set([a, b, c]));
      const row = {
        tenant: a,
        collection: 'events' as const,
        holder: 'host-1',
        lastProbeAt: '2026-11-26T12:01:00.000Z',
        lastChangeAt: null,
        lastFreshAt: '2026-11-26T12:01:00.000Z',
        intervalMs: 45_000,
        probes: 3,
      };
      await mirror.watch.saveWatchStatus([row], '2026-11-26T12:01:01.000Z');
      await mirror.watch.saveWatchStatus([{ ...row, probes: 4, intervalMs: 5000 }], '2026-11-26T12:01:06.000Z');
      const [events] = (await mirror.store.mirrorStatus()).filter((m) => m.tenant === 'a');
      expect(events?.watch).toEqual({
        holder: 'host-1',
        lastProbeAt: '2026-11-26T12:01:00.000Z',
        lastChangeAt: null,
        lastFreshAt: '2026-11-26T12:01:00.000Z',
        intervalMs: 5000,
        probes: 4,
        updatedAt: '2026-11-26T12:01:06.000Z',
      });
    } finally {
      await mirror.close();
    }
  });

  it('a probe that succeeded after the last failure of the published variant clears it, newer wins, in SQL', async () => {
    const clock = manualClock(Date.parse('2026-11-26T07:00:00.000Z'));
    const mirror = await openMirror(await database(), clock);
    try {
      const tenant = tenantSlug('a');
      const key = { tenant, collection: 'pages' as const, variant: PUBLISHED };
      const at = (hhmmss: string) => `2026-11-26T${hhmmss}.000Z`;
      const blank: SyncState = { ...BLANK_SYNC_STATE, lastSuccessAt: at('03:00:00') };
      const fail = (when: string, variant: string | null = PUBLISHED) =>
        mirror.store.write(key, {
          next: { ...blank, lastError: 'GET /pages -> 401', lastErrorAt: at(when), lastErrorVariant: variant },
        });
      const row = (lastFreshAt: string | null, holder = 'host-1'): WatchStatusRow => ({
        tenant,
        collection: 'pages',
        holder,
        lastProbeAt: lastFreshAt ?? at('07:45:30'),
        lastChangeAt: null,
        lastFreshAt,
        intervalMs: 5000,
        probes: 1,
      });
      const save = (r: WatchStatusRow) => mirror.watch.saveWatchStatus([r], r.lastProbeAt ?? at('07:59:00'));
      const pages = async () => {
        const s = (await mirror.store.mirrorStatus()).find((m) => m.collection === 'pages');
        return { lastErrorAt: s?.lastErrorAt, freshSince: s?.freshSince, lastFreshAt: s?.watch?.lastFreshAt };
      };

      await fail('07:43:00');
      // A probe made before the failure proves nothing about it.
      await save(row(at('07:42:50')));
      expect(await pages()).toEqual({ lastErrorAt: at('07:43:00'), freshSince: null, lastFreshAt: at('07:42:50') });
      // The first probe that succeeded after it clears it, and stays the time it did while later ones succeed.
      await save(row(at('07:44:10')));
      await save(row(at('07:44:40')));
      expect(await pages()).toEqual({
        lastErrorAt: at('07:43:00'),
        freshSince: at('07:44:10'),
        lastFreshAt: at('07:44:40'),
      });
      // Another worker takes over: its rows before its first success, or a paused one's older news, take nothing away.
      await save(row(null, 'host-2'));
      await save(row(at('07:44:20'), 'host-3'));
      expect(await pages()).toEqual({
        lastErrorAt: at('07:43:00'),
        freshSince: at('07:44:10'),
        lastFreshAt: at('07:44:40'),
      });
      // A newer failure wins over the probes made before it, at once, and is cleared by the next one that succeeds.
      await fail('07:50:00');
      expect((await pages()).freshSince).toBeNull();
      await save(row(at('07:50:05')));
      expect((await pages()).freshSince).toBe(at('07:50:05'));
      // Watch probes the published variant only: a failure of the drafts, or outside the variants' passes, stays.
      await fail('07:55:00', 'draft');
      await save(row(at('07:55:05')));
      expect((await pages()).freshSince).toBeNull();
      await fail('07:56:00', null);
      await save(row(at('07:56:05')));
      expect((await pages()).freshSince).toBeNull();
      // A successful run clears the failure itself.
      await mirror.store.write(key, { next: { ...blank, lastSuccessAt: at('07:57:00') } });
      expect(await pages()).toMatchObject({ lastErrorAt: null, freshSince: null });
    } finally {
      await mirror.close();
    }
  });
});
