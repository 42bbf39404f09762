import type { ChangeFeedReader } from '../changes/change-log-port.js';
import { safeUrl } from '../changes/webhook-endpoints.js';
import { drifts, type StoredCheck } from '../sync/self-check.js';
import { formatTable } from './format-table.js';

/** A tenant's last self-check, as `status` shows it. */
export interface LastCheck {
  readonly at: string;
  /** Collections and variants where the mirror and the upstream differ (drift, or missing, extra or stale records). */
  readonly drifting: number;
  readonly collections: readonly (Omit<StoredCheck, 'tenant' | 'collection'> & { readonly collection: string })[];
}

/** A webhook endpoint, as `status` shows it (its URL without credentials or query). */
export interface WebhookStatus {
  readonly tenant: string;
  readonly endpoint: string;
  readonly url: string;
  readonly deliveredSeq: number;
  /** Changes committed after its position (not all of them need be its: filters apply). */
  readonly behind: number;
  readonly lastDeliveryAt: string | null;
  readonly lastError: string | null;
  readonly disabled: boolean;
  readonly disabledAt: string | null;
  readonly disabledReason: string | null;
}

/** The change feed's part of `status`: each tenant's last check, and the webhook endpoints. */
export async function changeFeedStatus(changes: ChangeFeedReader): Promise<{
  lastChecks: Map<string, LastCheck>;
  webhooks: WebhookStatus[];
}> {
  const lastChecks = new Map<string, LastCheck>();
  for (const c of await changes.lastChecks()) {
    const prev = lastChecks.get(c.tenant) ?? { at: c.checkedAt, drifting: 0, collections: [] };
    const { tenant: _t, ...row } = c;
    lastChecks.set(c.tenant, {
      at: prev.at > c.checkedAt ? prev.at : c.checkedAt,
      drifting: prev.drifting + (drifts(c) ? 1 : 0),
      collections: [...prev.collections, row],
    });
  }
  const end = await changes.lastSeq();
  const webhooks = (await changes.endpoints()).map((e) => ({
    tenant: e.tenant,
    endpoint: e.id,
    url: safeUrl(e.url),
    deliveredSeq: e.deliveredSeq,
    behind: Math.max(0, end - e.deliveredSeq),
    lastDeliveryAt: e.lastDeliveryAt,
    lastError: e.lastError,
    disabled: e.disabledAt !== null,
    disabledAt: e.disabledAt,
    disabledReason: e.disabledReason,
  }));
  return { lastChecks, webhooks };
}

/** One drifting collection and variant in words: `forms +1`, `pages/draft 0 (1 missing, 1 extra)`. */
const driftText = (c: LastCheck['collections'][number]): string => {
  const ids = (['missing', 'extra', 'stale'] as const).filter((k) => (c[k] ?? 0) > 0).map((k) => `${c[k]} ${k}`);
  const name = `${c.collection}${c.variant === 'published' ? '' : `/${c.variant}`}`;
  return `${name} ${c.drift > 0 ? '+' : ''}${c.drift}${ids.length > 0 ? ` (${ids.join(', ')})` : ''}`;
};

/** The lines `status` prints about checks and webhooks (none when there is nothing to say). */
export function formatChangeFeed(
  tenants: readonly { readonly slug: string; readonly lastCheck: LastCheck | null }[],
  webhooks: readonly WebhookStatus[],
): string[] {
  const out: string[] = [];
  for (const t of tenants) {
    if (!t.lastCheck) continue;
    const d = t.lastCheck.collections.filter(drifts);
    out.push(
      `last check of ${t.slug}: ${t.lastCheck.at}, ${d.length === 0 ? 'no drift' : `drift in ${d.map(driftText).join(', ')}`}`,
    );
  }
  if (webhooks.length > 0) {
    out.push(
      '',
      'webhooks:',
      formatTable(
        webhooks.map((w) => ({
          tenant: w.tenant,
          endpoint: w.endpoint,
          url: w.url,
          state: w.disabled ? `disabled (${w.disabledReason}) since ${w.disabledAt}` : 'enabled',
          'delivered seq': w.deliveredSeq,
          'last delivery': w.lastDeliveryAt ?? 'never',
          'last error': w.lastError ?? '',
        })),
      ),
    );
  }
  return out;
}
