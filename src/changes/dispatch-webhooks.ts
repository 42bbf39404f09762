import type { Logger } from '../log.js';
import type { ChangeLog } from './change-log-port.js';
import { nextBatch, type WebhookBatch } from './webhook-batch.js';
import type { WebhookEndpoint } from './webhook-endpoints.js';

/** Where batches wait for delivery (BullMQ in the worker). One job per batch, named by endpoint and first `seq`. */
export interface BatchQueue {
  /**
   * Adds a job for `batch` unless one for the same endpoint and first `seq` exists (made by this or another
   * process). Says which: `added`, `exists` (waiting, delayed, running or delivered), or `dead` (dead-lettered,
   * with the last `seq` that job carries).
   */
  add(
    batch: WebhookBatch,
  ): Promise<{ readonly state: 'added' | 'exists' } | { readonly state: 'dead'; lastSeq: number }>;
}

export interface DispatchDeps {
  readonly log: ChangeLog;
  readonly queue: BatchQueue;
  readonly endpoints: readonly WebhookEndpoint[];
  readonly logger: Logger;
  readonly now?: () => Date;
}

/**
 * Hands each enabled endpoint its next batch. An endpoint has at most one batch in the queue at a time (the next
 * is made once the previous was delivered or dead-lettered), which keeps its deliveries in `seq` order; endpoints
 * never wait on each other. Any number of processes may dispatch at once: a batch is identified by its endpoint
 * and first `seq`, so they add the same job. Returns how many batches were added.
 */
export async function dispatchWebhooks(deps: DispatchDeps): Promise<number> {
  const now = (deps.now?.() ?? new Date()).toISOString();
  const upTo = await deps.log.lastSeq();
  let added = 0;
  for (const endpoint of deps.endpoints) {
    const state = await deps.log.endpoint(endpoint.id, endpoint.tenant, endpoint.url, now);
    if (state.disabledAt !== null || state.deliveredSeq >= upTo) continue;
    const next = await nextBatch(deps.log, endpoint, state.deliveredSeq, upTo, now);
    if ('skipTo' in next) {
      // Nothing for this endpoint up to the horizon: its position moves on, so the next look starts there.
      await deps.log.advanceEndpoint(endpoint.id, next.skipTo, now, false);
      continue;
    }
    const r = await deps.queue.add(next.batch);
    if (r.state === 'added') added++;
    else if (r.state === 'dead') {
      // Dead-lettered by a worker that stopped before moving the position on: move it on now.
      deps.logger.warn({ endpoint: endpoint.id, lastSeq: r.lastSeq }, 'webhook batch dead-lettered; moving on');
      await deps.log.advanceEndpoint(endpoint.id, r.lastSeq, now, false);
    }
  }
  return added;
}
