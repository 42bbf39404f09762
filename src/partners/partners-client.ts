import type { BulkKind, CollectionSlug } from '../vocabulary/collections.js';
import type { JsonObject, RecordId, TenantSlug, UpstreamDoc } from '../vocabulary/ids.js';
import type { Parking } from './gate-parking.js';
import type { RequestKind } from './rate-gate.js';

/** Payload-style `where`: `{ field: { op: value } }`, with nested `and` / `or` arrays. */
export type Where = JsonObject;

/** Options common to every read of one record or a list. */
export interface ReadQuery {
  readonly depth?: number;
  readonly draft?: boolean;
  readonly locale?: string;
  readonly fallbackLocale?: string;
  readonly select?: JsonObject;
  readonly populate?: JsonObject;
  readonly joins?: JsonObject;
}

export interface ListQuery extends ReadQuery {
  readonly collection: CollectionSlug;
  readonly limit: number;
  readonly page?: number;
  readonly sort?: string;
  readonly where?: Where;
  /** `false` asks for every matching record in one answer (metadata may then be absent). Default `true`. */
  readonly pagination?: boolean;
}

/** The list envelope after validation: every field the spec names, normalised to numbers and booleans. */
export interface ListPage {
  readonly docs: UpstreamDoc[];
  readonly totalDocs: number;
  /** The page size the upstream says it applied (it may clamp what was asked for). */
  readonly limit: number;
  readonly totalPages: number;
  readonly page: number;
  readonly pagingCounter: number;
  readonly hasPrevPage: boolean;
  readonly hasNextPage: boolean;
  readonly prevPage: number | null;
  readonly nextPage: number | null;
}

export interface ThemeSettingsSchema extends JsonObject {}

/** Per-call options: cancellation and a hook counting every request attempt sent (retries included). */
export interface CallOptions {
  readonly signal: AbortSignal;
  readonly onAttempt?: () => void;
  /** Called once per 429 answer (the key is then paused and the request retried). */
  readonly onRateLimited?: () => void;
  /**
   * Told when a request has waited a moment at its key's rate gate (`since`: when the wait began) and again with
   * `null` once it is let through: a progress display says "waiting for the read budget".
   */
  readonly onWaiting?: (kind: 'read' | 'write', since: number | null) => void;
  /**
   * The job's parking, when it has one: a request that waits this long for its key's budget gives its worker slot
   * back (`GateParkedError`) instead of waiting on. Jobs set it for all their requests with `parkingClient`.
   */
  readonly parking?: Parking;
  /**
   * Grants already taken at the key's gate (`PartnersClient.reserve`): a request of a kind the reservation still
   * holds spends one instead of waiting at the gate, so the requests of a sequence leave back to back.
   */
  readonly prepaid?: Prepaid;
}

/** Grants taken ahead at the key's gate, spent one per request. */
export interface Prepaid {
  /** Spends one grant of `kind`; false when none is left (the request then waits at the gate as usual). */
  take(kind: RequestKind): boolean;
  /** Gives every grant not spent back to the gate (after a 429, the rest wait for the key's pause). Idempotent. */
  forfeit(): void;
}

/** How many requests of each kind a sequence reserves. */
export type ReserveCounts = Readonly<Partial<Record<RequestKind, number>>>;

/** Takes a sequence's budget at the key's gate (`PartnersClient.reserve`). */
export type Reserve = (counts: ReserveCounts, opts: CallOptions) => Promise<Reservation>;

/** A sequence's budget, taken at the gate before its first request. */
export interface Reservation {
  /** The caller's options with the grants attached: pass them to every request of the sequence. */
  readonly call: CallOptions;
  /** Takes `counts` more requests into the same reservation (a sequence that turns out longer than planned). */
  extend(counts: ReserveCounts): Promise<void>;
  /** Gives the grants not spent back to the gate, so they never count against the key. Idempotent. */
  release(): void;
}

/** The result of a bulk write, as the spec's response body. */
export interface BulkResult extends JsonObject {}

/**
 * The Content Partners API as seen by one tenant with one key. Implementations enforce the rate budget,
 * retry what is retryable and throw `UpstreamError` / `BadResponseError` for the rest.
 */
export interface PartnersClient {
  readonly tenant: TenantSlug;
  /** Fetches one page of a list route. */
  listPage(q: ListQuery, opts: CallOptions): Promise<ListPage>;
  /** Fetches one record by id; throws `UpstreamError` with status 404 when it does not exist. */
  getById(collection: CollectionSlug, id: RecordId, q: ReadQuery, opts: CallOptions): Promise<UpstreamDoc>;
  /** Fetches the theme-settings schema of a collection. */
  themeSettingsSchema(collection: CollectionSlug, opts: CallOptions): Promise<ThemeSettingsSchema>;
  /** Fetches the version's OpenAPI description (a public route: no key is sent). */
  openapi(opts: CallOptions): Promise<JsonObject>;
  /** Creates a record and returns it as stored (unwrapping a `{doc, message}` answer). */
  create(collection: CollectionSlug, body: JsonObject, q: ReadQuery, opts: CallOptions): Promise<UpstreamDoc>;
  /** Partially updates a record with PUT or PATCH and returns it as stored. */
  update(
    collection: CollectionSlug,
    id: RecordId,
    method: 'PUT' | 'PATCH',
    body: JsonObject,
    q: ReadQuery,
    opts: CallOptions,
  ): Promise<UpstreamDoc>;
  /** Deletes a record and returns what was deleted. */
  delete(collection: CollectionSlug, id: RecordId, opts: CallOptions): Promise<UpstreamDoc>;
  /**
   * Takes `counts` requests of the key's budget at once (waiting at the gate, or parking, as a request would), for a
   * sequence whose requests must leave back to back. Release the reservation when the sequence ends.
   */
  reserve(counts: ReserveCounts, opts: CallOptions): Promise<Reservation>;
  /** Runs a bulk set/unset and returns the per-record results. */
  bulk(
    collection: CollectionSlug,
    kind: BulkKind,
    body: JsonObject,
    q: { readonly draft?: boolean },
    opts: CallOptions,
  ): Promise<BulkResult>;
}

/**
 * The client with every call's options passed through `f` first (a job's parking, a meter counting each attempt):
 * the one way to give all of a client's calls an option.
 */
export function withCallOptions(client: PartnersClient, f: (opts: CallOptions) => CallOptions): PartnersClient {
  return {
    tenant: client.tenant,
    listPage: (q, opts) => client.listPage(q, f(opts)),
    getById: (collection, id, q, opts) => client.getById(collection, id, q, f(opts)),
    themeSettingsSchema: (collection, opts) => client.themeSettingsSchema(collection, f(opts)),
    openapi: (opts) => client.openapi(f(opts)),
    create: (collection, body, q, opts) => client.create(collection, body, q, f(opts)),
    update: (collection, id, method, body, q, opts) => client.update(collection, id, method, body, q, f(opts)),
    delete: (collection, id, opts) => client.delete(collection, id, f(opts)),
    bulk: (collection, kind, body, q, opts) => client.bulk(collection, kind, body, q, f(opts)),
    reserve: (counts, opts) => client.reserve(counts, f(opts)),
  };
}
