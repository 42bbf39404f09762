import { type ConnectionOptions, type Job, Queue } from 'bullmq';
import type { BatchQueue } from '../changes/dispatch-webhooks.js';
import { WEBHOOK_ATTEMPTS } from '../changes/retry-schedule.js';
import type { WebhookBatch } from '../changes/webhook-batch.js';
import { UnderstudyError } from '../errors.js';
import type { ErrorListener } from './error-listeners.js';

/** The queue webhook batches wait on (one job per batch; never a secret in its data). */
export const WEBHOOKS_QUEUE = 'webhooks';
/** The backoff type of webhook jobs: the worker's `backoffStrategy` gives the delays (src/changes/retry-schedule.ts). */
export const WEBHOOK_BACKOFF = 'webhook';

export type WebhookQueue = Queue<WebhookBatch, unknown, string>;

/** Opens the webhook queue, `onError` listening to its `error` events. */
export const openWebhookQueue = (connection: ConnectionOptions, prefix: string, onError: ErrorListener): WebhookQueue =>
  new Queue<WebhookBatch, unknown, string>(WEBHOOKS_QUEUE, { connection, prefix }).on('error', onError);

/** A batch's job id: its endpoint and first `seq` (every dispatching process names it alike). */
export const webhookJobId = (endpoint: string, firstSeq: number): string => `wh.${endpoint}.${firstSeq}`;

/**
 * The webhook queue as the dispatcher sees it. Delivered jobs are kept an hour (so a process that looked at an
 * endpoint's position just before it moved adds nothing twice), dead letters 30 days.
 */
export function webhookBatchQueue(queue: WebhookQueue, attempts = WEBHOOK_ATTEMPTS): BatchQueue {
  return {
    async add(batch) {
      const jobId = webhookJobId(batch.endpoint, batch.firstSeq);
      const existing = await queue.getJob(jobId);
      if (existing) {
        if ((await existing.getState()) === 'failed') return { state: 'dead', lastSeq: existing.data.lastSeq };
        return { state: 'exists' };
      }
      await queue.add('deliver', batch, {
        jobId,
        attempts,
        backoff: { type: WEBHOOK_BACKOFF },
        removeOnComplete: { age: 3600, count: 10_000 },
        removeOnFail: { age: 30 * 24 * 3600, count: 10_000 },
      });
      return { state: 'added' };
    },
  };
}

/** A dead-lettered batch, as `understudy webhooks failed` lists it. */
export interface FailedWebhook {
  readonly jobId: string;
  readonly endpoint: string;
  readonly tenant: string;
  readonly webhookId: string;
  readonly firstSeq: number;
  readonly lastSeq: number;
  readonly changes: number;
  readonly attempts: number;
  readonly reason: string;
  readonly failedAt: string | null;
}

const failedOf = (job: Job<WebhookBatch>): FailedWebhook => ({
  jobId: job.id ?? '?',
  endpoint: job.data.endpoint,
  tenant: job.data.tenant,
  webhookId: job.data.webhookId,
  firstSeq: job.data.firstSeq,
  lastSeq: job.data.lastSeq,
  changes: job.data.changes.length,
  attempts: job.attemptsMade,
  reason: job.failedReason ?? 'failed',
  failedAt: job.finishedOn ? new Date(job.finishedOn).toISOString() : null,
});

/** Dead-lettered webhook batches, newest first. */
export async function listFailedWebhooks(queue: WebhookQueue): Promise<FailedWebhook[]> {
  const jobs = (await queue.getFailed(0, -1)).filter((j): j is Job<WebhookBatch> => Boolean(j));
  return jobs.map(failedOf).sort((a, b) => (b.failedAt ?? '').localeCompare(a.failedAt ?? ''));
}

const jobOrThrow = async (queue: WebhookQueue, jobId: string): Promise<Job<WebhookBatch>> => {
  const job = await queue.getJob(jobId);
  if (!job) throw new UnderstudyError('US_VALIDATION', `no webhook job ${jobId}`);
  return job;
};

/** One webhook job: its state, batch (changes included), attempts and last failure. */
export async function showWebhook(queue: WebhookQueue, jobId: string): Promise<Record<string, unknown>> {
  const job = await jobOrThrow(queue, jobId);
  return {
    jobId,
    state: await job.getState(),
    attempts: job.attemptsMade,
    reason: job.failedReason ?? null,
    createdAt: new Date(job.timestamp).toISOString(),
    finishedAt: job.finishedOn ? new Date(job.finishedOn).toISOString() : null,
    batch: job.data,
  };
}

/** Queues a dead-lettered batch again with fresh attempts (same body, same `webhook-id`). */
export async function retryWebhook(queue: WebhookQueue, jobId: string): Promise<void> {
  const job = await jobOrThrow(queue, jobId);
  const state = await job.getState();
  if (state !== 'failed')
    throw new UnderstudyError('US_VALIDATION', `webhook job ${jobId} is ${state}, not failed: nothing to retry`);
  await job.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true });
}
