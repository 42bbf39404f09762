/**
 * The public API for other apps (`import { createWriteQueue } from 'understudy'`): add writes and syncs for the
 * workers, run the simulator in-process, and the error class every failure is.
 */

export { type ErrorCode, UnderstudyError, UpstreamError } from './errors.js';
export { type EnqueueSyncOptions, enqueueSync } from './queue/enqueue-sync.js';
export type { SyncMode } from './queue/queues.js';
export { createWriteQueue, type WriteQueue, type WriteQueueOptions } from './queue/write-queue.js';
export { type Simulator, type SimulatorOptions, startSimulator } from './sim/start-simulator.js';
export type { CollectionSlug } from './vocabulary/collections.js';
export { DEFAULT_MAX_BODY_BYTES, WriteValidationError } from './writes/validate-write.js';
export type { WriteJobData } from './writes/write-job.js';
export { WriteJobSchema, writeJobJsonSchema } from './writes/write-job-schema.js';
