import { createHmac } from 'node:crypto';

/** The headers of one Standard Webhooks delivery attempt. */
export interface WebhookHeaders {
  readonly 'webhook-id': string;
  readonly 'webhook-timestamp': string;
  readonly 'webhook-signature': string;
}

/**
 * Signs a delivery as the Standard Webhooks specification says: `v1,` + base64 of HMAC-SHA256, keyed by the
 * secret's bytes, over `id.timestamp.body` (timestamp in whole seconds since the epoch).
 */
export function signWebhook(key: Buffer, id: string, timestampSeconds: number, body: string): WebhookHeaders {
  const mac = createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': String(timestampSeconds), 'webhook-signature': `v1,${mac}` };
}
