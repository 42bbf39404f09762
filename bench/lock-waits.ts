/**
 * How long the writers of a PostgreSQL mirror wait for a lock: `pg_stat_activity` sampled every ~20 ms on the
 * mirror's database, for the backends of understudy's own pools (`application_name` 'understudy').
 */
import pg from 'pg';
import { sleep } from './understudy-child.js';

const EVERY_MS = 20;
const BUSY = new Set(['active', 'idle in transaction']);
const LOCKS = new Set(['Lock', 'LWLock']);

/** What the sampler saw over a run. */
export interface LockWaits {
  /** Samples taken, and the mean interval between them (ms). */
  readonly samples: number;
  readonly everyMs: number;
  /** Backend-samples in a transaction (state 'active' or 'idle in transaction'): the writers' commit time. */
  readonly busy: number;
  /** Of those, the ones waiting on a heavyweight lock ('Lock') and on a lightweight one ('LWLock'). */
  readonly lock: number;
  readonly lwlock: number;
  /** Samples in which at least one backend was busy, and those in which one of them waited on Lock or LWLock. */
  readonly busySamples: number;
  readonly waitSamples: number;
  /** Lock and LWLock waits by `type:event`, the most frequent first. */
  readonly events: readonly (readonly [string, number])[];
  /** The most backends busy at once. */
  readonly maxBusy: number;
}

interface Row {
  readonly state: string | null;
  readonly wait_event_type: string | null;
  readonly wait_event: string | null;
}

class Tally {
  samples = 0;
  busy = 0;
  lock = 0;
  lwlock = 0;
  busySamples = 0;
  waitSamples = 0;
  maxBusy = 0;
  readonly events = new Map<string, number>();

  add(rows: readonly Row[]): void {
    this.samples++;
    const busy = rows.filter((r) => r.state !== null && BUSY.has(r.state));
    const waiting = busy.filter((r) => r.wait_event_type !== null && LOCKS.has(r.wait_event_type));
    this.busy += busy.length;
    this.maxBusy = Math.max(this.maxBusy, busy.length);
    if (busy.length > 0) this.busySamples++;
    if (waiting.length > 0) this.waitSamples++;
    for (const r of waiting) {
      if (r.wait_event_type === 'Lock') this.lock++;
      else this.lwlock++;
      const key = `${r.wait_event_type}:${r.wait_event}`;
      this.events.set(key, (this.events.get(key) ?? 0) + 1);
    }
  }
}

/** Starts sampling `database` on the server at `url`; `stop()` ends it and returns the tally. */
export async function sampleLockWaits(url: string, database: string): Promise<{ stop: () => Promise<LockWaits> }> {
  const client = new pg.Client({ connectionString: url, application_name: 'understudy-bench-sampler' });
  await client.connect();
  const tally = new Tally();
  let running = true;
  const t0 = performance.now();
  let failed: unknown;
  const loop = (async () => {
    while (running) {
      const at = performance.now();
      const r = await client.query<Row>(
        `SELECT state, wait_event_type, wait_event FROM pg_stat_activity
          WHERE datname = $1 AND application_name = 'understudy' AND backend_type = 'client backend'`,
        [database],
      );
      tally.add(r.rows);
      // A late sample is not made up for: the next one is at least a few ms later.
      await sleep(Math.max(2, at + EVERY_MS - performance.now()));
    }
  })().catch((err: unknown) => {
    // Kept for stop(), which throws it: a sampler that died must not pass for a run with no lock waits.
    failed = err;
  });
  return {
    stop: async () => {
      running = false;
      await loop;
      await client.end();
      if (failed) throw new Error(`the lock-wait sampler failed: ${(failed as Error).message}`);
      return {
        samples: tally.samples,
        everyMs: (performance.now() - t0) / Math.max(1, tally.samples),
        busy: tally.busy,
        lock: tally.lock,
        lwlock: tally.lwlock,
        busySamples: tally.busySamples,
        waitSamples: tally.waitSamples,
        events: [...tally.events].sort((a, b) => b[1] - a[1]),
        maxBusy: tally.maxBusy,
      };
    },
  };
}
