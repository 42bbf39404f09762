import { Counter, Gauge, type Registry } from 'prom-client';
import type { StoredCheck } from '../sync/self-check.js';

export interface ChangeMetrics {
  /** Counts one webhook delivery attempt's end, by tenant and outcome (delivered, retry, dead, gone). */
  webhookAttempt(e: { readonly tenant: string; readonly outcome: string }): void;
}

/**
 * The change feed's metrics on a registry: webhook attempts, and the last self-check's drift per tenant and
 * collection, read from the mirror at each scrape (so a check made by any process, CLI included, shows).
 */
export function registerChangeMetrics(
  registry: Registry,
  opts: { readonly lastChecks: () => Promise<readonly StoredCheck[]> },
): ChangeMetrics {
  const registers = [registry];
  const attempts = new Counter({
    name: 'understudy_webhook_attempts_total',
    help: 'Webhook delivery attempts, by tenant and outcome (delivered, retry, dead: attempts spent, gone: a 410).',
    labelNames: ['tenant', 'outcome'] as const,
    registers,
  });
  new Gauge({
    name: 'understudy_mirror_drift_records',
    help:
      "The last self-check's drift (upstream totalDocs minus the mirror's live rows), by tenant and collection: of " +
      'its variants, the one furthest from 0.',
    labelNames: ['tenant', 'collection'] as const,
    registers,
    async collect() {
      this.reset();
      const worst = new Map<string, StoredCheck>();
      for (const c of await opts.lastChecks()) {
        const k = `${c.tenant}\u0000${c.collection}`;
        const prev = worst.get(k);
        if (!prev || Math.abs(c.drift) > Math.abs(prev.drift)) worst.set(k, c);
      }
      for (const c of worst.values()) this.set({ tenant: c.tenant, collection: c.collection }, c.drift);
    },
  });
  return { webhookAttempt: (e) => attempts.inc({ tenant: e.tenant, outcome: e.outcome }) };
}
