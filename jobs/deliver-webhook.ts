import { type Job, UnrecoverableError } from 'bullmq';
import type { ChangeLog } from '../src/changes/change-log-port.js';
import { deliverBatch, type WebhookSender } from '../src/changes/deliver-webhook.js';
import type { WebhookBatch } from '../src/changes/webhook-batch.js';
import { safeUrl, signingKey, type WebhookEndpoint } from '../src/changes/webhook-endpoints.js';
import { describeError } from '../src/errors.js';
import type { Logger } from '../src/log.js';

export interface DeliverDeps {
  /** The endpoints of the current config (a reload may change them). */
  readonly endpoints: () => readonly WebhookEndpoint[];
  /** The current environment, where secrets are read at each attempt (never stored, never in job data). */
  readonly env: () => NodeJS.ProcessEnv;
  readonly changes: ChangeLog;
  readonly sender: WebhookSender;
  readonly log: Logger;
  /** Aborted when shutdown can wait no longer: a delivery in flight is cut (and tried again later). */
  readonly stop?: AbortSignal;
  /** Told of each attempt's end: `delivered`, `retry`, `dead` (attempts spent) or `gone` (a 410). */
  readonly onAttempt?: (e: { readonly tenant: string; readonly outcome: string; readonly ms: number }) => void;
  readonly now?: () => Date;
}

/**
 * The webhook processor: one signed delivery attempt of one batch. Delivered: the endpoint's position moves to the
 * batch's last `seq`. A 410: the endpoint is disabled and the batch dead-lettered at once. Anything else is thrown
 * for BullMQ to retry with backoff; on the last attempt the position moves on past the dead-lettered batch, so the
 * endpoint's next changes are not held behind it (`understudy webhooks retry` sends it again).
 */
export const deliverWebhookProcessor =
  (deps: DeliverDeps) =>
  async (job: Job<WebhookBatch>, _token?: string, signal?: AbortSignal): Promise<{ status: number }> => {
    const batch = job.data;
    const at = () => (deps.now?.() ?? new Date()).toISOString();
    const endpoint = deps.endpoints().find((e) => e.id === batch.endpoint);
    if (!endpoint) throw new UnrecoverableError(`endpoint ${batch.endpoint} is not in the config any more`);
    const log = deps.log.child({ endpoint: endpoint.id, url: safeUrl(endpoint.url), webhookId: batch.webhookId });
    const state = await deps.changes.endpoint(endpoint.id, endpoint.tenant, endpoint.url, at());
    if (state.disabledAt !== null)
      throw new UnrecoverableError(`endpoint disabled since ${state.disabledAt} (${state.disabledReason})`);
    const started = Date.now();
    const report = (outcome: string) => deps.onAttempt?.({ tenant: batch.tenant, outcome, ms: Date.now() - started });
    let reason: string;
    try {
      const key = signingKey(endpoint, deps.env());
      const outcome = await deliverBatch(deps.sender, endpoint.url, key, batch, {
        signal: AbortSignal.any([signal, deps.stop].filter((s): s is AbortSignal => s !== undefined)),
      });
      if (outcome.kind === 'delivered') {
        await deps.changes.advanceEndpoint(endpoint.id, batch.lastSeq, at(), true);
        report('delivered');
        log.debug({ status: outcome.status, changes: batch.changes.length }, 'webhook delivered');
        return { status: outcome.status };
      }
      if (outcome.kind === 'gone') {
        await deps.changes.disableEndpoint(endpoint.id, 'HTTP 410 Gone', at());
        report('gone');
        log.warn({ status: 410 }, 'webhook endpoint answered 410 Gone: disabled');
        throw new UnrecoverableError('HTTP 410 Gone: endpoint disabled');
      }
      reason = outcome.reason;
    } catch (err) {
      if (err instanceof UnrecoverableError) throw err;
      reason = describeError(err);
    }
    await deps.changes.endpointFailed(endpoint.id, reason, at());
    const attempt = job.attemptsMade + 1;
    const attempts = job.opts.attempts ?? 1;
    if (attempt >= attempts) {
      await deps.changes.advanceEndpoint(endpoint.id, batch.lastSeq, at(), false);
      report('dead');
      log.error({ attempt, reason }, 'webhook batch dead-lettered after its last attempt');
    } else {
      report('retry');
      log.warn({ attempt, attempts, reason }, 'webhook delivery failed; retrying');
    }
    throw new Error(reason);
  };
