/** The public API for other apps: add syncs for the workers without running them in-process. */
export { type EnqueueSyncOptions, enqueueSync } from './queue/enqueue-sync.js';
export type { SyncMode } from './queue/queues.js';
