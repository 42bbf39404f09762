import { describe, expect, it, onTestFinished } from 'vitest';
import { type CollectionStatus, checkStatus, formatStatus, type StatusReport } from '../../src/cli/status-command.js';
import type { RedisLossReport } from '../../src/queue/redis-loss.js';

/** The clock the table is read at: the tests drive it, nothing sleeps. */
const NOW = Date.parse('2026-11-26T07:45:00.000Z');
const ago = (s: number) => new Date(NOW - s * 1000).toISOString();

const collection = (over: Partial<CollectionStatus> = {}): CollectionStatus => ({
  name: 'series',
  live: 12,
  deleted: 0,
  lastSuccessAt: ago(600),
  lastSuccessAgeSeconds: 600,
  freshAgeSeconds: 600,
  lastError: null,
  lastErrorAt: null,
  freshSince: null,
  watch: null,
  ...over,
});

/** A collection watched every `every` seconds, last probed `probed` seconds ago, its row written 2 s ago. */
const watched = (every: number, probed: number): CollectionStatus =>
  collection({
    watch: {
      lastProbeAt: ago(probed),
      lastChangeAt: null,
      lastFreshAt: ago(probed),
      probeIntervalSeconds: every,
      probes: 9,
      holder: 'vm:1:a',
      updatedAt: ago(2),
    },
  });

const report = (collections: CollectionStatus[], lost: RedisLossReport | null = null): StatusReport => ({
  database: { path: '/srv/m.db', exists: true },
  tenants: [{ slug: 'harbour-opera', nextRun: { incremental: null, full: null }, collections, lastCheck: null }],
  webhooks: [],
  redis: lost
    ? { ok: true, configured: true, url: 'redis://127.0.0.1:6379', prefix: 'us', lost }
    : { ok: false, configured: false },
  queues: [],
  serve: lost ? [] : null,
});

/** The table's line for the series collection. */
const seriesLine = (c: CollectionStatus): string =>
  formatStatus(report([c]), NOW)
    .split('\n')
    .find((l) => l.includes(' series ')) ?? '';

describe('the words of `understudy status`', () => {
  it('says a probe is due, and since when, once it is later than its interval and the 5 s the watcher writes in', () => {
    // The case seen: every 5 s, last probe 32 s ago. The probe was due 27 s ago.
    expect(seriesLine(watched(5, 32))).toMatch(/ every 5 s, due 27 s ago\b/);
    expect(seriesLine(watched(5, 32))).not.toMatch(/probed/);
    // On time: the last probe, and nothing due.
    expect(seriesLine(watched(5, 3))).toMatch(/ every 5 s, probed 3 s ago\b/);
    expect(seriesLine(watched(51, 40))).toMatch(/ every 51 s, probed 40 s ago\b/);
    // A probe made when due is in the row within the watcher's next write (5 s): not late yet at 10 s, late at 11 s.
    expect(seriesLine(watched(5, 10))).toMatch(/ every 5 s, probed 10 s ago\b/);
    expect(seriesLine(watched(5, 11))).toMatch(/ every 5 s, due 6 s ago\b/);
    expect(seriesLine(watched(51, 70))).toMatch(/ every 51 s, due 19 s ago\b/);
  });

  it('says when Redis was last seen intact, in the line on a loss of its data', () => {
    const lost: RedisLossReport = {
      detectedAt: '2026-11-26T07:44:00.000Z',
      lastSeenAt: '2026-11-26T07:43:30.000Z',
      queues: [{ name: 'writes', waiting: 2, active: 0, delayed: 0, prioritized: 0, paused: 0 }],
      schedulesRecreated: ['harbour-opera incremental'],
    };
    const text = formatStatus(report([collection()], lost), NOW);
    const line = text.split('\n').find((l) => l.startsWith('Redis lost its data')) ?? '';
    expect(line).toContain('noticed at 2026-11-26T07:44:00.000Z, last seen intact at 2026-11-26T07:43:30.000Z.');
    expect(line).not.toMatch(/whole at/);
    // Never checked before the loss: no such clause.
    const never = formatStatus(report([collection()], { ...lost, lastSeenAt: null }), NOW);
    expect(never).not.toMatch(/last seen intact|whole at/);
  });

  it('shows a failure watch has cleared as "failed HH:MM, fresh since HH:MM", those words never cut', () => {
    const tz = process.env.TZ;
    process.env.TZ = 'UTC';
    onTestFinished(() => {
      if (tz === undefined) delete process.env.TZ;
      else process.env.TZ = tz;
    });
    const cleared = collection({
      lastError: `GET /partners/2026-02/harbour-opera/series -> 401: Valid API key required ${'x'.repeat(80)}`,
      lastErrorAt: '2026-11-26T07:43:10.000Z',
      freshSince: '2026-11-26T07:44:05.000Z',
      watch: watched(51, 40).watch,
    });
    expect(seriesLine(cleared)).toMatch(/ failed 07:43, fresh since 07:44/);
    // Another day: its date too.
    const yesterday = { ...cleared, lastErrorAt: '2026-11-25T22:10:00.000Z' };
    expect(seriesLine(yesterday)).toMatch(/ failed Nov 25 22:10, fresh since 07:44/);
  });
});

describe('status --check --max-age with watch', () => {
  it('measures from the later of the last successful run and the last successful watch probe', () => {
    // The nightly full pass 7 h ago, watch finding the collection fresh 6 s ago: fresh, not stale.
    const probed = {
      ...watched(60, 6),
      lastSuccessAt: ago(7 * 3600),
      lastSuccessAgeSeconds: 7 * 3600,
      freshAgeSeconds: 6,
    };
    expect(checkStatus(report([probed]), 2 * 3600)).toEqual([]);
    // Watch stopped 3 h ago as well: stale, and the line says both.
    const stopped = { ...probed, freshAgeSeconds: 3 * 3600 };
    expect(checkStatus(report([stopped]), 2 * 3600)).toEqual([
      {
        exit: 6,
        text: 'harbour-opera series: last success 7 h 00 min ago, last fresh watch probe 3 h 00 min ago, older than --max-age (7200 s)',
      },
    ]);
  });
});
