import { createHash } from 'node:crypto';
import {
  BULK_ROUTES,
  type BulkKind,
  type CollectionSlug,
  DOCUMENTED_ROUTES,
  type RouteOp,
  VERSIONED,
} from '../vocabulary/collections.js';
import type { JsonObject, JsonValue } from '../vocabulary/ids.js';

/** The four kinds of write; `update` goes out as PUT or PATCH, whichever route the spec has. */
export const WRITE_OPS = ['create', 'update', 'delete', 'bulk'] as const;
export type WriteOp = (typeof WRITE_OPS)[number];

/** Collections the spec lets you create (POST). */
export type CreateCollection = 'series' | 'posts' | 'blogs' | 'media' | 'forms';
/** Collections the spec lets you update: PUT, except event instances (PATCH). */
export type UpdateCollection =
  | 'seasons'
  | 'organizations'
  | 'media'
  | 'custom-attributes'
  | 'redirects'
  | 'event-instances';
/** Collections the spec lets you delete from. */
export type DeleteCollection = 'event-instances';
/** Collections with a bulk route: custom attributes (organizations, series) or theme settings (blogs). */
export type BulkCollection = 'organizations' | 'series' | 'blogs';

const opsOf = (op: RouteOp): CollectionSlug[] =>
  (Object.entries(DOCUMENTED_ROUTES) as [CollectionSlug, readonly RouteOp[]][])
    .filter(([, ops]) => ops.includes(op))
    .map(([c]) => c);

/** Per write op, the collections whose route the spec documents (read from the shared route table). */
export const WRITABLE: Readonly<Record<WriteOp, readonly CollectionSlug[]>> = {
  create: opsOf('create'),
  update: [...new Set([...opsOf('put'), ...opsOf('patch')])],
  delete: opsOf('delete'),
  bulk: BULK_ROUTES.map((r) => r.collection),
};

/**
 * The body of a bulk set/unset: which records (`where`, `ids` or `all: true`), the keys to `set` to values and
 * the keys to `unset`, and `dryRun` to see what would change.
 */
export interface BulkBody {
  readonly where?: JsonObject;
  readonly ids?: readonly (string | number)[];
  readonly all?: boolean;
  readonly set?: { readonly [key: string]: JsonValue };
  readonly unset?: readonly string[];
  readonly dryRun?: boolean;
}

interface Common {
  readonly tenant: string;
  /** Same key, same job: the job id is derived from it (see `jobIdFor`). */
  readonly idempotencyKey?: string;
  /** Enqueue sequence number, used to apply writes to one record in order; set by the enqueuer. */
  readonly seq?: number;
  /** The name of the `serve` API token that enqueued it (never the token). */
  readonly tokenName?: string;
}

export interface CreateJob extends Common {
  readonly op: 'create';
  readonly collection: CreateCollection;
  readonly body: JsonObject;
  readonly draft?: boolean;
}
export interface UpdateJob extends Common {
  readonly op: 'update';
  readonly collection: UpdateCollection;
  readonly id: string;
  readonly body: JsonObject;
  readonly draft?: boolean;
}
export interface DeleteJob extends Common {
  readonly op: 'delete';
  readonly collection: DeleteCollection;
  readonly id: string;
}
export interface BulkJob extends Common {
  readonly op: 'bulk';
  readonly collection: BulkCollection;
  readonly body: BulkBody;
  readonly draft?: boolean;
}

/** The data of one write job, as stored in Redis. Never holds an API key: the worker has the keys. */
export type WriteJobData = CreateJob | UpdateJob | DeleteJob | BulkJob;

/** The HTTP route a write goes to. */
export interface WriteRoute {
  readonly method: 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  readonly bulkKind?: BulkKind;
}

export function routeOf(data: WriteJobData): WriteRoute {
  switch (data.op) {
    case 'create':
      return { method: 'POST' };
    case 'update':
      return { method: DOCUMENTED_ROUTES[data.collection].includes('put') ? 'PUT' : 'PATCH' };
    case 'delete':
      return { method: 'DELETE' };
    case 'bulk':
      return { method: 'PATCH', bulkKind: bulkKindOf(data.collection) };
  }
}

export function bulkKindOf(collection: CollectionSlug): BulkKind {
  const route = BULK_ROUTES.find((r) => r.collection === collection);
  if (!route) throw new TypeError(`${collection} has no bulk route`);
  return route.kind;
}

/** Ops where the spec's `draft` query parameter applies: creates and updates of versioned collections, and bulk. */
export const draftAllowed = (op: WriteOp, collection: CollectionSlug): boolean =>
  op === 'bulk' || ((op === 'create' || op === 'update') && VERSIONED.has(collection));

/** The record a write addresses, for per-record ordering; null for creates and bulk writes. */
export const recordOf = (data: WriteJobData): string | null =>
  data.op === 'update' || data.op === 'delete' ? data.id : null;

/**
 * The BullMQ job id of a write with an idempotency key: a hash of tenant and key, so the same key for the
 * same tenant always names the same job (BullMQ ignores an add whose id exists).
 */
export const jobIdFor = (tenant: string, idempotencyKey: string): string =>
  `idem-${createHash('sha256').update(`${tenant}\n${idempotencyKey}`).digest('hex').slice(0, 40)}`;

/** A one-line description of a write's target: `update event-instances/42`. */
export const describeTarget = (data: WriteJobData): string => {
  const id = recordOf(data);
  return `${data.op} ${data.tenant}/${data.collection}${id === null ? '' : `/${id}`}`;
};

/** JSON text with every object's keys sorted, bigints exact: two values are equal when their texts are. */
const canonical = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const o = value as Record<string, unknown>;
    return `{${Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`)
      .join(',')}}`;
  }
  return typeof value === 'bigint' ? value.toString() : JSON.stringify(value);
};

/** Whether two writes are the same request: op, tenant, collection, id, draft and body (not who sent it, nor when). */
export const sameWrite = (a: unknown, b: WriteJobData): boolean => {
  const what = (d: unknown) => {
    const x = (typeof d === 'object' && d !== null ? d : {}) as Record<string, unknown>;
    return canonical([x.op, x.tenant, x.collection, x.id ?? null, x.draft === true, x.body ?? null]);
  };
  return what(a) === what(b);
};
