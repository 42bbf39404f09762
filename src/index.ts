/**
 * The public API for other apps (`import { createWriteQueue } from 'understudy'`): add writes and syncs for the
 * workers, follow a write to its outcome, run the simulator in-process, and the error class every failure is.
 */

export { type EnqueueSyncOptions, enqueueSync } from './app/enqueue-sync.js';
export { openMirrorReader } from './app/open-mirror-reader.js';
export { type ErrorCode, UnderstudyError, UpstreamError } from './errors.js';
export type { WaitForWriteOptions } from './queue/follow-write.js';
export type { SyncMode } from './queue/queues.js';
export {
  createWriteQueue,
  type DraftableWriteOptions,
  type WriteOptions,
  type WriteQueue,
  type WriteQueueOptions,
  type WriteRoutes,
  type WriteWarningCode,
} from './queue/write-queue.js';
export { type Simulator, type SimulatorOptions, startSimulator } from './sim/start-simulator.js';
export type { MirrorReader } from './store/mirror-reader.js';
export type { CollectionName, CollectionSlug } from './vocabulary/collections.js';
export {
  type CustomAttributesSource,
  DEFAULT_MAX_BODY_BYTES,
  type ThemeSchemaSource,
  type WriteRequest,
  WriteValidationError,
} from './writes/validate-write.js';
export { type CreateBody, MAX_BODY_DEPTH, type UpdateBody } from './writes/write-bodies.js';
export type {
  BulkBody,
  BulkCollection,
  CreateCollection,
  DeleteCollection,
  UpdateCollection,
  WriteJobData,
} from './writes/write-job.js';
export { WriteJobSchema, writeJobJsonSchema } from './writes/write-job-schema.js';
export {
  type BulkSummary,
  type WriteFailure,
  type WriteState,
  type WriteStateName,
  WriteWaitTimeoutError,
} from './writes/write-state.js';
