import type { Clock } from '../vocabulary/clock.js';
import type { TenantSlug } from '../vocabulary/ids.js';
import type { WatchStore } from './watch-port.js';

/**
 * Which tenants this process watches: a lease per tenant in the mirror (`watch_owners`), taken or renewed by each
 * claim for `ttlMs`, so that two workers never watch one tenant and a dead worker's tenants are taken over once its
 * leases have expired. One claim runs at a time; a claim under way is shared by whoever asks meanwhile.
 */
export class TenantOwnership<T> {
  /** Claims made: the first one starts the tenants spread over their idle interval, later ones (takeovers) sooner. */
  private claims = 0;
  /** The tenants this process holds the watch of, as of the last claim. */
  private owned: ReadonlySet<TenantSlug> = new Set();
  private claiming: Promise<void> | null = null;
  /** When the last claim that succeeded started (this process' clock): its leases last `ttlMs` from about then. */
  private claimedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly opts: {
      readonly rows: WatchStore;
      readonly clock: Clock;
      readonly holder: string;
      readonly ttlMs: number;
      /** The tenants to claim now, and their slugs. */
      readonly wanted: () => readonly T[];
      readonly slugOf: (t: T) => TenantSlug;
      /** Told after each claim, with the tenants it was made for and the ones this process watches now. */
      readonly claimed: (tenants: readonly T[], owned: ReadonlySet<TenantSlug>) => void;
    },
  ) {}

  /** Takes (or renews) the watch of the wanted tenants; shares a claim under way. */
  claim(): Promise<void> {
    this.claiming ??= this.claimOnce().finally(() => {
      this.claiming = null;
    });
    return this.claiming;
  }

  private async claimOnce(): Promise<void> {
    const { rows, clock, holder, ttlMs, wanted, slugOf, claimed } = this.opts;
    this.claims++;
    const started = clock.now();
    const tenants = wanted();
    const owned = await rows.claimWatch(tenants.map(slugOf), holder, ttlMs);
    this.claimedAt = started;
    this.owned = owned;
    claimed(tenants, owned);
  }

  /**
   * Whether the leases of the last claim surely still hold: a claim succeeded within half their lifetime. Past that
   * (the process was paused, stalled, or could not reach the mirror), another worker may have taken its tenants.
   */
  fresh(): boolean {
    return this.opts.clock.now() - this.claimedAt < this.opts.ttlMs / 2;
  }

  /** Who watches, in `watch_owners` and `watch_state`. */
  get holder(): string {
    return this.opts.holder;
  }

  owns(slug: TenantSlug): boolean {
    return this.owned.has(slug);
  }

  /** Whether claims came before the last one: tenants it brought are taken over from another worker. */
  takingOver(): boolean {
    return this.claims > 1;
  }

  /** How often the claims renew the leases (and ask for free ones): every quarter of their lifetime. */
  renewEveryMs(): number {
    return Math.max(100, Math.floor(this.opts.ttlMs / 4));
  }

  /** Gives up every tenant this process watches (a clean stop hands them over at once). */
  release(): Promise<void> {
    return this.opts.rows.releaseWatch(this.opts.holder);
  }
}
