import { keyHash } from '../partners/key-hash.js';
import { othersWaitingAtHead, type WaitingJobs } from '../queue/head-of-queue.js';
import type { App } from './create-app.js';

/**
 * The fairness rule (src/queue/head-of-queue.ts) over a worker's queue, with the app's tenants' keys as their
 * budgets: whether parking a job of `tenant` would let another key's tenant run.
 */
export const othersWaitingOn = (app: Pick<App, 'tenant'>, queue: WaitingJobs, depth: number) =>
  othersWaitingAtHead({
    queue,
    depth,
    budgetOf: (tenant) => {
      const t = app.tenant(tenant);
      return t ? keyHash(t.resolved.apiKey) : null;
    },
  });
