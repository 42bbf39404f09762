import { type Dispatcher, request } from 'undici';
import type { WebhookSender } from './deliver-webhook.js';

/** How long a receiver has to answer one delivery (headers, then body), as Standard Webhooks senders commonly allow. */
export const WEBHOOK_TIMEOUT_MS = 15_000;

/**
 * The webhook sender over undici, on a dispatcher of its own (never the Partners API's pool, so a slow receiver
 * holds no connection the upstream needs). The answer's body is dropped; redirects are not followed.
 */
export function httpWebhookSender(dispatcher: Dispatcher, timeoutMs = WEBHOOK_TIMEOUT_MS): WebhookSender {
  return {
    async post(url, headers, body, signal) {
      const res = await request(url, {
        method: 'POST',
        headers: { ...headers, 'user-agent': 'understudy-webhooks' },
        body,
        dispatcher,
        signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]),
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      await res.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
      return res.statusCode;
    },
  };
}
