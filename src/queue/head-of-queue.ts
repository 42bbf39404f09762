/** What the fairness rule reads of a BullMQ queue: its next waiting jobs. */
export interface WaitingJobs {
  getWaiting(start: number, end: number): Promise<readonly ({ readonly data?: unknown } | undefined)[]>;
}

export interface HeadOfQueueOptions {
  readonly queue: WaitingJobs;
  /** How many waiting jobs make the head (what freed slots would take next). */
  readonly depth: number;
  /** The budget a tenant's requests wait for (its key's hash), or null for a tenant not configured. */
  readonly budgetOf: (tenant: string) => string | null;
  /** How long one read of the head is reused; default 1000 ms. */
  readonly maxAgeMs?: number;
  readonly now?: () => number;
}

const tenantOf = (job: { readonly data?: unknown } | undefined): string =>
  String((job?.data as { tenant?: unknown } | undefined)?.tenant);

/**
 * The fairness rule of the sync and the write workers: a job that waits for its key's budget gives its slot back
 * (parks) only when a job of another tenant, on another budget, waits at the head of the queue; a tenant on the
 * same key would only wait for the same budget. The head is read from Redis at most once per `maxAgeMs`.
 */
export function othersWaitingAtHead(opts: HeadOfQueueOptions): (tenant: string) => Promise<boolean> {
  const now = opts.now ?? Date.now;
  const maxAgeMs = opts.maxAgeMs ?? 1000;
  let head: { readonly at: number; readonly tenants: Promise<string[]> } | null = null;
  return async (tenant) => {
    if (!head || now() - head.at > maxAgeMs) {
      const at = now();
      head = { at, tenants: opts.queue.getWaiting(0, opts.depth - 1).then((jobs) => jobs.map(tenantOf)) };
    }
    const mine = opts.budgetOf(tenant);
    return (await head.tenants).some((other) => other !== tenant && opts.budgetOf(other) !== mine);
  };
}
