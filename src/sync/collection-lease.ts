import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import type { Clock } from '../vocabulary/clock.js';
import type { CollectionSlug } from '../vocabulary/collections.js';
import type { TenantSlug } from '../vocabulary/ids.js';
import { type ScheduleClock, wallClock } from './schedule-clock.js';
import type { Lease, Store } from './store-port.js';

/** A crashed holder's lease expires after this long; a live holder renews it every third of it. */
export const DEFAULT_LEASE_TTL_MS = 30_000;
/** How often a run waiting for a held collection (`--wait`) asks again. */
const WAIT_POLL_MS = 500;

/** Who holds a lease, for people reading `sync_leases`: host, process and a run-unique part. */
export const leaseHolder = (): string => `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;

/**
 * Whether `holder` is a process of this host that no longer runs (killed, crashed): its lease need not be waited
 * out. A holder on another host, or a process that still runs, is taken at its word until its lease expires.
 */
export function holderIsDead(holder: string): boolean {
  const [host, pid] = holder.split(':');
  if (host !== hostname() || !pid || !/^\d+$/.test(pid) || Number(pid) === process.pid) return false;
  try {
    process.kill(Number(pid), 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/**
 * Takes the lease on a tenant's collection, asking again every half second for up to `waitMs` (by `clock`) while
 * another live run holds it; null when it is still held then (or `signal` aborted the wait). A holder that died on
 * this host is taken over at once.
 */
export async function takeLease(
  store: Store,
  target: { readonly tenant: TenantSlug; readonly collection: CollectionSlug },
  opts: {
    readonly holder: string;
    readonly ttlMs: number;
    readonly waitMs: number;
    readonly clock: Clock;
    readonly signal: AbortSignal;
  },
): Promise<Lease | null> {
  const { clock } = opts;
  const until = clock.now() + opts.waitMs;
  for (;;) {
    let lease = await store.acquireLease(target.tenant, target.collection, opts.holder, opts.ttlMs);
    if (!lease) {
      const current = await store.leaseHolder(target.tenant, target.collection);
      if (current && holderIsDead(current.holder))
        lease = await store.acquireLease(target.tenant, target.collection, opts.holder, opts.ttlMs, {
          takeOverFrom: current.holder,
        });
    }
    if (lease || clock.now() >= until || opts.signal.aborted) return lease;
    // A ref'd timer: while a run waits, it is what keeps the process alive (SQLite holds no socket open; Node
    // would otherwise end the process with exit 13, its top-level await unsettled).
    await delay(Math.min(WAIT_POLL_MS, Math.max(1, until - clock.now())), undefined, { signal: opts.signal }).catch(
      () => undefined,
    );
  }
}

/**
 * Renews `lease` every third of its lifetime while a run holds it (a page may wait a minute for the read budget).
 * `onLost` is called once if a renewal finds it changed hands: the run must stop, its commits are refused anyway.
 * A renewal that fails for another reason (the database busy) is left to the next one, or to the next commit.
 */
export function keepLease(
  store: Store,
  lease: Lease,
  onLost: () => void,
  clock: Pick<ScheduleClock, 'every'> = wallClock,
): { stop(): Promise<void> } {
  let inFlight: Promise<void> = Promise.resolve();
  let stopped = false;
  const renewals = clock.every(Math.max(10, Math.floor(lease.ttlMs / 3)), () => {
    inFlight = store.renewLease(lease).then(
      (held) => {
        if (!held && !stopped) {
          stopped = true;
          void renewals.stop();
          onLost();
        }
      },
      () => undefined,
    );
  });
  return {
    async stop() {
      stopped = true;
      await renewals.stop();
      await inFlight;
    },
  };
}
