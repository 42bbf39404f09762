import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openMirror } from '../../src/store/open-mirror.js';
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
        intervalMs: 5000,
        probes: 4,
        updatedAt: '2026-11-26T12:01:06.000Z',
      });
    } finally {
      await mirror.close();
    }
  });
});
