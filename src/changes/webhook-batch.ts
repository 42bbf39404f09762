import type { Change, ChangeLog } from './change-log-port.js';
import type { WebhookEndpoint } from './webhook-endpoints.js';

/** At most this many changes go in one delivery. */
export const WEBHOOK_BATCH_SIZE = 100;

/**
 * One batch of changes for one endpoint: what a webhook job carries (never a secret). Every attempt sends the same
 * body under the same `webhook-id`, so a receiver drops a repeat by its id.
 */
export interface WebhookBatch {
  readonly endpoint: string;
  readonly tenant: string;
  /** `msg_` + the endpoint id + the first and last `seq`: the batch's identity, kept across retries. */
  readonly webhookId: string;
  readonly firstSeq: number;
  readonly lastSeq: number;
  /** When the batch was made (ISO): the payload's `timestamp`. */
  readonly createdAt: string;
  readonly changes: readonly Change[];
}

export const webhookIdOf = (endpoint: string, firstSeq: number, lastSeq: number): string =>
  `msg_${endpoint}_${firstSeq}_${lastSeq}`;

/** The JSON body of a delivery: `{ type, timestamp, data: { endpoint, tenant, changes } }` (Standard Webhooks' shape). */
export const webhookBody = (b: WebhookBatch): string =>
  JSON.stringify({
    type: 'mirror.changes',
    timestamp: b.createdAt,
    data: { endpoint: b.endpoint, tenant: b.tenant, changes: b.changes },
  });

/**
 * What comes next for an endpoint whose position is `after`, looking at the log up to `upTo`: a batch of up to 100
 * changes its filters select, in `seq` order, or (when none) the position it may skip to.
 */
export async function nextBatch(
  log: ChangeLog,
  endpoint: WebhookEndpoint,
  after: number,
  upTo: number,
  now: string,
): Promise<{ readonly batch: WebhookBatch } | { readonly skipTo: number }> {
  const changes = await log.read({
    since: after,
    upTo,
    tenants: [endpoint.tenant],
    ...(endpoint.collections ? { collections: endpoint.collections } : {}),
    ...(endpoint.kinds ? { kinds: endpoint.kinds } : {}),
    ...(endpoint.reasons ? { reasons: endpoint.reasons } : {}),
    limit: WEBHOOK_BATCH_SIZE,
  });
  const first = changes[0];
  const last = changes.at(-1);
  if (!first || !last) return { skipTo: upTo };
  return {
    batch: {
      endpoint: endpoint.id,
      tenant: endpoint.tenant,
      webhookId: webhookIdOf(endpoint.id, first.seq, last.seq),
      firstSeq: first.seq,
      lastSeq: last.seq,
      createdAt: now,
      changes,
    },
  };
}
