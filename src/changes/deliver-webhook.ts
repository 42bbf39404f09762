import { describeError } from '../errors.js';
import { signWebhook } from './sign-webhook.js';
import { type WebhookBatch, webhookBody } from './webhook-batch.js';

/** Sends one signed delivery. The adapter (undici) is src/changes/http-webhook-sender.ts. */
export interface WebhookSender {
  /**
   * POSTs `body` to `url` with `headers`; resolves with the answer's status (its body read and dropped, redirects
   * not followed); rejects on a network error, on a timeout, or when `signal` aborts.
   */
  post(url: string, headers: Readonly<Record<string, string>>, body: string, signal: AbortSignal): Promise<number>;
}

/** How one delivery attempt ended: received (2xx), gone for good (410), or to be tried again. */
export type DeliveryOutcome =
  | { readonly kind: 'delivered'; readonly status: number }
  | { readonly kind: 'gone'; readonly status: 410 }
  | { readonly kind: 'failed'; readonly reason: string };

/**
 * One attempt at delivering `batch`: signed now (Standard Webhooks: the timestamp is the attempt's), the same body
 * and `webhook-id` every time. 2xx is received; 410 Gone asks never to be called again; anything else (other
 * statuses, redirects, network errors, timeouts) is worth another attempt.
 */
export async function deliverBatch(
  sender: WebhookSender,
  url: string,
  key: Buffer,
  batch: WebhookBatch,
  opts: { readonly signal: AbortSignal; readonly now?: () => number },
): Promise<DeliveryOutcome> {
  const body = webhookBody(batch);
  const seconds = Math.floor((opts.now?.() ?? Date.now()) / 1000);
  const headers = { ...signWebhook(key, batch.webhookId, seconds, body), 'content-type': 'application/json' };
  let status: number;
  try {
    status = await sender.post(url, headers, body, opts.signal);
  } catch (err) {
    return { kind: 'failed', reason: describeError(err) };
  }
  if (status >= 200 && status < 300) return { kind: 'delivered', status };
  if (status === 410) return { kind: 'gone', status };
  return { kind: 'failed', reason: `HTTP ${status}` };
}
