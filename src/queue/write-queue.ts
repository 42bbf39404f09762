import { setTimeout as sleep } from 'node:timers/promises';
import { type JobsOptions, Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { closeAll, closeOnce } from '../close-all.js';
import type { Config } from '../config/config-schema.js';
import { UnderstudyError } from '../errors.js';
import type { Store } from '../sync/store-port.js';
import { type JsonObject, type TenantSlug, tenantSlug } from '../vocabulary/ids.js';
import { jobDataForRedis, jobDataFromRedis } from '../writes/exact-body.js';
import type { RecordOrder } from '../writes/record-order.js';
import {
  type CustomAttributesSource,
  DEFAULT_MAX_BODY_BYTES,
  type MirrorDefinitions,
  type ThemeSchemaSource,
  validateWrite,
  type WriteLimits,
  type WriteRequest,
} from '../writes/validate-write.js';
import type { CreateBody, UpdateBody } from '../writes/write-bodies.js';
import {
  type BulkBody,
  type BulkCollection,
  type CreateCollection,
  type DeleteCollection,
  jobIdFor,
  recordOf,
  sameWrite,
  type UpdateCollection,
  type WriteJobData,
} from '../writes/write-job.js';
import type { WriteState } from '../writes/write-state.js';
import { type ErrorListener, errorsFailTheCalls } from './error-listeners.js';
import { getWriteState, type WaitForWriteOptions, waitForWriteState } from './follow-write.js';
import { DEFAULT_PREFIX, DEFAULT_REDIS_URL } from './queues.js';
import { createRecordOrder } from './redis-record-order.js';
import { asUnderstudyError, redactRedisUrl, shortLivedRedis } from './redis-settings.js';
import { noWorkerOn } from './workers-listening.js';

/** The one queue writes run on. */
export const WRITES_QUEUE = 'writes';

export type WriteQueueHandle = Queue<WriteJobData, unknown, string>;

/**
 * Options of every write job. Retries are decided by the worker (config `writes.attempts`), so BullMQ itself makes
 * one attempt; failed jobs are kept for `understudy writes failed|retry`, completed ones for a week so an
 * idempotency key keeps naming its job.
 */
export const WRITE_JOB_OPTIONS: JobsOptions = {
  attempts: 1,
  removeOnComplete: { age: 7 * 24 * 3600, count: 50_000 },
  removeOnFail: { age: 90 * 24 * 3600, count: 50_000 },
};

/** Opens the writes queue on a connection, `onError` listening to its `error` events. */
export const openWritesQueue = (connection: Redis, prefix: string, onError: ErrorListener): WriteQueueHandle =>
  new Queue<WriteJobData, unknown, string>(WRITES_QUEUE, { connection, prefix }).on('error', onError);

export interface WriteOptions {
  /** Same key (per tenant), same job: a second enqueue returns the first job's id and queues nothing. */
  readonly idempotencyKey?: string;
}
export interface DraftableWriteOptions extends WriteOptions {
  /** Write the draft version (`draft=true`), where the spec allows it. */
  readonly draft?: boolean;
}

type Create<C extends CreateCollection> = (
  tenant: string,
  body: CreateBody<C>,
  opts?: DraftableWriteOptions,
) => Promise<string>;
type Update<C extends UpdateCollection> = (
  tenant: string,
  id: string,
  body: UpdateBody<C>,
  opts?: DraftableWriteOptions,
) => Promise<string>;
type Bulk = (tenant: string, body: BulkBody, opts?: DraftableWriteOptions) => Promise<string>;

/**
 * One typed method per write route of the spec, each a shorthand for `create`/`update`/`delete`/`bulk`. Bodies are
 * typed by the spec's resource shape of the route, so a misspelt field at any depth does not compile.
 */
export interface WriteRoutes {
  /** POST /series */
  createSeries: Create<'series'>;
  /** POST /posts */
  createPost: Create<'posts'>;
  /** POST /blogs */
  createBlog: Create<'blogs'>;
  /** POST /media (metadata only) */
  createMedia: Create<'media'>;
  /** POST /forms */
  createForm: Create<'forms'>;
  /** PUT /seasons/{id} (partial) */
  updateSeason: Update<'seasons'>;
  /** PUT /organizations/{id} (partial) */
  updateOrganization: Update<'organizations'>;
  /** PUT /media/{id} (partial; media are addressed by filename where they carry no id) */
  updateMedia: Update<'media'>;
  /** PUT /custom-attributes/{id} (partial) */
  updateCustomAttributes: Update<'custom-attributes'>;
  /** PUT /redirects/{id} (partial) */
  updateRedirect: Update<'redirects'>;
  /** PATCH /event-instances/{id} */
  updateEventInstance: Update<'event-instances'>;
  /** DELETE /event-instances/{id} */
  deleteEventInstance(tenant: string, id: string, opts?: WriteOptions): Promise<string>;
  /** PATCH /organizations/custom-attributes (bulk set/unset) */
  bulkOrganizationAttributes: Bulk;
  /** PATCH /series/custom-attributes (bulk set/unset) */
  bulkSeriesAttributes: Bulk;
  /** PATCH /blogs/theme-settings (bulk set/unset) */
  bulkBlogThemeSettings: Bulk;
}

const CREATES = {
  createSeries: 'series',
  createPost: 'posts',
  createBlog: 'blogs',
  createMedia: 'media',
  createForm: 'forms',
} as const satisfies Record<string, CreateCollection>;
const UPDATES = {
  updateSeason: 'seasons',
  updateOrganization: 'organizations',
  updateMedia: 'media',
  updateCustomAttributes: 'custom-attributes',
  updateRedirect: 'redirects',
  updateEventInstance: 'event-instances',
} as const satisfies Record<string, UpdateCollection>;
const BULKS = {
  bulkOrganizationAttributes: 'organizations',
  bulkSeriesAttributes: 'series',
  bulkBlogThemeSettings: 'blogs',
} as const satisfies Record<string, BulkCollection>;

/** The route methods, built over the generic ones. */
function routeMethods(q: Pick<WriteQueue, 'create' | 'update' | 'delete' | 'bulk'>): WriteRoutes {
  const m = <K extends string, V>(table: Record<K, V>, f: (v: V) => unknown) =>
    Object.fromEntries(Object.entries<V>(table).map(([k, v]) => [k, f(v)]));
  return {
    // Each method's body type is its route's (WriteRoutes); the generic method checks it again at run time.
    ...m(CREATES, (c) => (tenant: string, body: never, o?: DraftableWriteOptions) => q.create(tenant, c, body, o)),
    ...m(
      UPDATES,
      (c) => (tenant: string, id: string, body: never, o?: DraftableWriteOptions) => q.update(tenant, c, id, body, o),
    ),
    ...m(
      BULKS,
      (c): Bulk =>
        (tenant, body, o) =>
          q.bulk(tenant, c, body, o),
    ),
    deleteEventInstance: (tenant, id, o) => q.delete(tenant, 'event-instances', id, o),
  } as WriteRoutes;
}

/** The enqueue side of writes: validates each write, queues it, returns its job id; and follows a write. */
export interface WriteQueue extends WriteRoutes {
  /** Queues a create (POST) of series, posts, blogs, media or forms. */
  create<C extends CreateCollection>(
    tenant: string,
    collection: C,
    body: CreateBody<C>,
    opts?: DraftableWriteOptions,
  ): Promise<string>;
  /** Queues a partial update (PUT; PATCH for event instances). */
  update<C extends UpdateCollection>(
    tenant: string,
    collection: C,
    id: string,
    body: UpdateBody<C>,
    opts?: DraftableWriteOptions,
  ): Promise<string>;
  /** Queues a delete of an event instance. */
  delete(tenant: string, collection: DeleteCollection, id: string, opts?: WriteOptions): Promise<string>;
  /** Queues a bulk set/unset of custom attributes (organizations, series) or theme settings (blogs). */
  bulk(tenant: string, collection: BulkCollection, body: BulkBody, opts?: DraftableWriteOptions): Promise<string>;
  /** Queues any write given as data (what the CLI and other apps send); `op` may also be `put` or `patch`. */
  enqueue(request: WriteRequest): Promise<string>;
  /**
   * `enqueue`, saying also whether the job is new (`created`) and, when an idempotency key named a job already
   * there, whether that job is the same write (`sameWrite`: op, collection, id, draft and body equal).
   */
  submit(request: WriteRequest): Promise<SubmittedWrite>;
  /** Where a write stands (`queued`, `running`, `retrying`, `ok`, `partial`, `failed`), with its outcome. */
  getWrite(jobId: string): Promise<WriteState>;
  /**
   * Resolves with the write's outcome (`ok`, `partial` or `failed`: a failed write resolves, it does not reject);
   * rejects with `WriteWaitTimeoutError` (code `US_TIMEOUT`) after `timeoutMs`.
   */
  waitForWrite(jobId: string, opts?: WaitForWriteOptions): Promise<WriteState>;
  /** Closes the queue and the Redis connection if this client opened it. Idempotent. */
  close(): Promise<void>;
}

export interface WriteQueueOptions {
  /** Default: `REDIS_URL` from the environment, else `redis://127.0.0.1:6379` (as every CLI command). */
  readonly redisUrl?: string;
  /** An ioredis connection to use instead (not closed by `close()`). */
  readonly connection?: Redis;
  /** Redis key prefix; default `understudy`. */
  readonly prefix?: string;
  /**
   * Where theme-settings writes find the tenant's mirrored schema to be checked against (a port: the queue opens
   * no database). Absent: theme settings are checked without a schema.
   */
  readonly themeSchema?: ThemeSchemaSource;
  /**
   * Where bulk custom-attribute writes find the tenant's mirrored Custom Attribute record (its attribute
   * definitions) to be checked against. Absent, or nothing mirrored yet: such a write is queued unchecked, with a
   * warning (`onWarning`, code `US_UNCHECKED`).
   */
  readonly customAttributes?: CustomAttributesSource;
  /**
   * Or the mirror, already open, for both (not closed by `close()`): `openMirrorReader(config)`, or a store that
   * can scan its documents.
   */
  readonly store?: Pick<Store, 'getThemeSchema'> &
    Partial<Pick<Store, 'scanDocs'>> & {
      readonly customAttributes?: (tenant: TenantSlug) => Promise<JsonObject | null>;
    };
  /** Largest body accepted, in bytes of compact JSON; default `config.writes.maxBodyBytes`, else 1 MiB. */
  readonly maxBodyBytes?: number;
  /**
   * Accept body fields the spec's resource shape does not have: `true` for every tenant, or the tenants that may;
   * default: the tenants whose config sets `writes.allowExtraFields`, else none.
   */
  readonly allowExtraFields?: boolean | readonly string[];
  /** The understudy config, for `writes.maxBodyBytes` and each tenant's `writes.allowExtraFields`. */
  readonly config?: Pick<Config, 'writes' | 'tenants'>;
  /**
   * Where the client's warnings go; default `process.emitWarning` (type `UnderstudyWarning`): `US_NO_WORKER` once,
   * after the first write, when no worker listens on its queue; `US_UNCHECKED`, once per tenant and collection, for a
   * write queued without a check the mirror cannot make yet (bulk custom attributes before their definitions are
   * mirrored, or with no way to read them).
   */
  readonly onWarning?: (warning: { readonly code: WriteWarningCode; readonly message: string }) => void;
}

/** The codes of the write client's warnings. */
export type WriteWarningCode = 'US_NO_WORKER' | 'US_UNCHECKED';

const emitWarning = ({ code, message }: { readonly code: string; readonly message: string }): void =>
  process.emitWarning(message, { type: 'UnderstudyWarning', code });

/** The enqueue limits for one tenant, from the options (which win) and the config. */
export function writeLimitsFor(opts: WriteQueueOptions, tenant: string): WriteLimits {
  const allow = opts.allowExtraFields;
  const fromConfig = opts.config?.tenants.find((t) => t.slug === tenant)?.writes?.allowExtraFields ?? false;
  return {
    maxBodyBytes: opts.maxBodyBytes ?? opts.config?.writes?.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    allowExtraFields:
      allow === undefined ? fromConfig : allow === true || (Array.isArray(allow) && allow.includes(tenant)),
  };
}

/** A write handed to the queue: its job id, and whether this call created the job or found it there. */
export interface AddedWrite {
  readonly jobId: string;
  /** False when an idempotency key named a job that was already there (nothing new was queued). */
  readonly created: boolean;
}

/** What `submit` tells about a write it was handed. */
export interface SubmittedWrite extends AddedWrite {
  /** False when the idempotency key named a job that is another write: nothing was queued for this one. */
  readonly sameWrite: boolean;
}

/** How long a claim on an idempotency key stands while its job is added, and how long a second caller waits. */
const CLAIM_MS = 30_000;
const CLAIM_WAIT_MS = 5_000;

/**
 * Makes this caller the one that adds the job of an idempotency key: false when the job is there already. Two
 * processes enqueuing the same key at once (two `serve` processes, a retried HTTP request) race on `SET NX`; the
 * loser waits until the winner's job exists, so both name one job and it joins its record's line once.
 */
async function claimKey(queue: WriteQueueHandle, jobId: string): Promise<boolean> {
  const redis = (await queue.client) as unknown as Redis;
  const key = `${queue.opts.prefix ?? DEFAULT_PREFIX}:idempotency:${jobId}`;
  for (const started = Date.now(); Date.now() - started < CLAIM_WAIT_MS; await sleep(25)) {
    if (await queue.getJob(jobId)) return false;
    if ((await redis.set(key, String(process.pid), 'PX', CLAIM_MS, 'NX')) === 'OK') {
      // Added by the last holder between the look and the claim.
      if (await queue.getJob(jobId)) return false;
      return true;
    }
  }
  throw new UnderstudyError(
    'US_REDIS',
    `write ${jobId}: another enqueue of the same idempotency key did not finish within ${CLAIM_WAIT_MS / 1000} s`,
  );
}

/** Queues one validated job: its id from the idempotency key, its place in the record's line. */
export async function addWriteJob(
  queue: WriteQueueHandle,
  order: RecordOrder,
  data: WriteJobData,
): Promise<AddedWrite> {
  const jobId = data.idempotencyKey === undefined ? undefined : jobIdFor(data.tenant, data.idempotencyKey);
  if (jobId && !(await claimKey(queue, jobId))) return { jobId, created: false };
  const seq = await order.nextSeq();
  // A body holding a bigint goes in as its exact JSON text (BullMQ's JSON.stringify cannot write one).
  const stored = jobDataForRedis({ ...data, seq }) as WriteJobData;
  const job = await queue.add(data.op, stored, { ...WRITE_JOB_OPTIONS, ...(jobId ? { jobId } : {}) });
  if (!job.id) throw new UnderstudyError('US_REDIS', 'BullMQ returned a write job without an id');
  const id = recordOf(data);
  if (id !== null) await order.join({ tenant: data.tenant, collection: data.collection, id }, job.id, seq);
  return { jobId: job.id, created: true };
}

/** Whether a job still waits to run (so later writes to its record must wait for it). */
export async function isPendingJob(queue: WriteQueueHandle, jobId: string): Promise<boolean> {
  const state = await queue.getJobState(jobId);
  return (
    state === 'waiting' ||
    state === 'delayed' ||
    state === 'prioritized' ||
    state === 'active' ||
    state === 'waiting-children'
  );
}

/** Where enqueue finds the mirror's definitions: the options' sources, else the store's, else none. */
function mirrorSourcesOf(opts: WriteQueueOptions): Pick<MirrorDefinitions, 'themeSchema' | 'customAttributes'> {
  const store = opts.store;
  const themeSchema: ThemeSchemaSource | null =
    opts.themeSchema ?? (store ? (tenant, collection) => store.getThemeSchema(tenantSlug(tenant), collection) : null);
  const scanDocs = store?.scanDocs?.bind(store);
  const mirrored = store?.customAttributes?.bind(store);
  const customAttributes: CustomAttributesSource | null =
    opts.customAttributes ??
    (mirrored ? (tenant) => mirrored(tenantSlug(tenant)) : null) ??
    (scanDocs
      ? async (tenant) => {
          let record: JsonObject | null = null;
          // The published copy (sync's `PUBLISHED`, a value the queue may not import).
          const key = { tenant: tenantSlug(tenant), collection: 'custom-attributes', variant: 'published' } as const;
          await scanDocs(key, (doc) => {
            record ??= doc;
          });
          return record;
        }
      : null);
  return { themeSchema, customAttributes };
}

/**
 * Runs calls on a live connection: one the client owns and that dropped is opened again first; errors come out as
 * `UnderstudyError`s, and a closed client refuses (`US_REDIS`).
 */
const liveCalls =
  (owned: Redis | null, url: string, closed: () => boolean) =>
  async <T>(call: () => Promise<T>): Promise<T> => {
    if (closed()) throw new UnderstudyError('US_REDIS', 'the write queue is closed');
    try {
      if (owned && owned.status === 'end') {
        await owned.connect().catch((err: unknown) => {
          owned.disconnect();
          throw new UnderstudyError('US_REDIS', `Redis unreachable at ${redactRedisUrl(url)}: ${String(err)}`);
        });
      }
      return await call();
    } catch (err) {
      throw asUnderstudyError(err);
    }
  };

type Warn = NonNullable<WriteQueueOptions['onWarning']>;

/** Once, after the first write is queued: a queue no worker drains (another prefix) would keep it for ever. */
function warnWhenUnheard(queue: WriteQueueHandle, prefix: string, warn: Warn): () => Promise<void> {
  let asked = false;
  return async () => {
    if (asked) return;
    asked = true;
    const why = await noWorkerOn(queue);
    if (why) {
      const message =
        `${why}: writes wait until a worker with redis.prefix "${prefix}" runs ` +
        '(a worker with another prefix drains another queue)';
      warn({ code: 'US_NO_WORKER', message });
    }
  };
}

/** What `enqueue` works with: the options, the queue, the record order and the live-connection wrapper. */
interface EnqueueParts {
  readonly opts: WriteQueueOptions;
  readonly queue: WriteQueueHandle;
  readonly order: RecordOrder;
  readonly live: ReturnType<typeof liveCalls>;
  readonly warn: Warn;
  readonly afterFirst: () => Promise<void>;
}

/** Validates a write against the spec and the mirror's definitions, queues it, and says what was left unchecked. */
function enqueueWith(p: EnqueueParts): (request: WriteRequest) => Promise<SubmittedWrite> {
  const sources = mirrorSourcesOf(p.opts);
  const uncheckedSaid = new Set<string>();
  return async (request) => {
    const unchecked: string[] = [];
    const mirror: MirrorDefinitions = { ...sources, onUnchecked: (m) => unchecked.push(m) };
    const tenant = typeof request?.tenant === 'string' ? request.tenant : '';
    const validated = await validateWrite(request, mirror, writeLimitsFor(p.opts, tenant)).catch((err: unknown) => {
      throw asUnderstudyError(err);
    });
    const by = request.tokenName;
    const data: WriteJobData = typeof by === 'string' && by !== '' ? { ...validated, tokenName: by } : validated;
    const added = await p.live(() => addWriteJob(p.queue, p.order, data));
    const sameWrite = added.created || (await p.live(() => namesSameWrite(p.queue, added.jobId, data)));
    for (const message of added.created ? unchecked : []) {
      // Once per tenant and collection: a batch of bulk writes says it once, not once a write.
      const about = `${data.tenant}/${data.collection}`;
      if (uncheckedSaid.has(about)) continue;
      uncheckedSaid.add(about);
      p.warn({ code: 'US_UNCHECKED', message });
    }
    await p.afterFirst();
    return { ...added, sameWrite };
  };
}

/** Whether the job already there under an idempotency key is the write `data` asks for (the token aside). */
async function namesSameWrite(queue: WriteQueueHandle, jobId: string, data: WriteJobData): Promise<boolean> {
  const job = await queue.getJob(jobId);
  if (!job) return true;
  return sameWrite(jobDataFromRedis(job.data), data);
}

/**
 * The TypeScript client other apps enqueue writes with. Every write is validated before anything is queued
 * (`WriteValidationError`, code `US_VALIDATION`, naming the problem) by one schema (`writeRequestSchema`): the
 * spec's routes and the shapes of their bodies at every depth, ids, the body cap, no prototype keys. Each method
 * returns the BullMQ job id. Against an unreachable Redis it rejects within seconds (`US_REDIS`) and leaves nothing
 * running; every error it throws is an `UnderstudyError`. After its first write it warns once (`onWarning`, default
 * `process.emitWarning`) when no worker listens on its queue, e.g. when the worker was started with another prefix.
 */
export async function createWriteQueue(opts: WriteQueueOptions = {}): Promise<WriteQueue> {
  const prefix = opts.prefix ?? DEFAULT_PREFIX;
  // No reconnection in the background: a connection that drops is opened again by the next call, so a client
  // whose Redis went away neither hangs a call nor keeps the process alive.
  const noRetry = { maxRetriesPerRequest: 1, enableOfflineQueue: true } as const;
  const url = opts.redisUrl ?? (process.env.REDIS_URL || DEFAULT_REDIS_URL);
  const owned = opts.connection ? null : await shortLivedRedis(url, 3000, noRetry);
  const redis = opts.connection ?? (owned as Redis);
  const queue = openWritesQueue(redis, prefix, errorsFailTheCalls);
  const order = createRecordOrder({ redis, prefix, isPending: (id) => isPendingJob(queue, id) });
  let closed = false;
  const live = liveCalls(owned, url, () => closed);
  const warn = opts.onWarning ?? emitWarning;
  const afterFirst = warnWhenUnheard(queue, prefix, warn);
  const submit = enqueueWith({ opts, queue, order, live, warn, afterFirst });
  const enqueue = async (request: WriteRequest) => (await submit(request)).jobId;
  const generic: Pick<WriteQueue, 'create' | 'update' | 'delete' | 'bulk'> = {
    create: (tenant, collection, body, o = {}) => enqueue({ op: 'create', tenant, collection, body, ...o }),
    update: (tenant, collection, id, body, o = {}) => enqueue({ op: 'update', tenant, collection, id, body, ...o }),
    delete: (tenant, collection, id, o = {}) => enqueue({ op: 'delete', tenant, collection, id, ...o }),
    bulk: (tenant, collection, body, o = {}) => enqueue({ op: 'bulk', tenant, collection, body, ...o }),
  };
  const close = closeOnce(() => {
    closed = true;
    return closeAll(
      [
        () => queue.close(),
        async () => {
          if (owned) await owned.quit().catch(() => owned.disconnect());
        },
      ],
      'the write queue',
    );
  });
  return {
    ...generic,
    ...routeMethods(generic),
    enqueue,
    submit,
    getWrite: (jobId) => live(() => getWriteState(queue, jobId)),
    waitForWrite: (jobId, o) => live(() => waitForWriteState(queue, jobId, o)),
    close,
  };
}
