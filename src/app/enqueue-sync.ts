import { addSyncJob, checkSyncJobRequest, type SyncJobRequest } from '../queue/enqueue-sync.js';
import { DEFAULT_PREFIX, DEFAULT_REDIS_URL } from '../queue/queues.js';
import { createApp } from './create-app.js';

export interface EnqueueSyncOptions extends SyncJobRequest {
  /** Default: `REDIS_URL` from the environment, else `redis://127.0.0.1:6379` (as every CLI command). */
  readonly redisUrl?: string;
  /** Key prefix the workers use (default `understudy`). */
  readonly prefix?: string;
}

/**
 * Adds a sync job for the workers instead of syncing in this process (a library caller's `sync --enqueue`), over
 * an app of the `queue` profile of its own; resolves to its job id (the id of the equal job already waiting, when
 * there is one). Every error is an `UnderstudyError`: `US_VALIDATION` for bad options, `US_REDIS` within seconds
 * when Redis is unreachable (nothing is left running).
 */
export async function enqueueSync(opts: EnqueueSyncOptions): Promise<string> {
  const { redisUrl = process.env.REDIS_URL || DEFAULT_REDIS_URL, prefix = DEFAULT_PREFIX, ...req } = opts;
  checkSyncJobRequest(req);
  await using app = await createApp(
    null,
    {},
    { profile: 'queue', redis: { url: redisUrl, prefix }, redisTimeoutMs: 2000 },
  );
  // Awaited here: the app (its Redis) is disposed when this block ends.
  return await addSyncJob(app.redis, prefix, req);
}
