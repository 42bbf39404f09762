import { codeOf, hasCode, isStop, isUpstreamError, UnderstudyError, type UpstreamError } from '../errors.js';
import type { CallOptions, PartnersClient } from '../partners/partners-client.js';
import { COLLECTIONS, type CollectionSlug, isCollectionSlug } from '../vocabulary/collections.js';
import { isJsonObject } from '../vocabulary/ids.js';

/** Which read routes the upstream serves for each collection. */
export interface ReadRoutes {
  readonly list: ReadonlySet<CollectionSlug>;
  readonly get: ReadonlySet<CollectionSlug>;
  /** How this was learnt: from the OpenAPI description, or by probing list routes. */
  readonly source: 'openapi' | 'probe';
}

const PATH = /\{tenant\}\/([a-z-]+)(\/\{[^}/]+\})?\/?$/;

/** Reads list and get-by-id routes out of an OpenAPI description's `paths`. Returns null if it has none. */
export function routesFromOpenApi(doc: unknown): Omit<ReadRoutes, 'source'> | null {
  if (!isJsonObject(doc) || !isJsonObject(doc.paths)) return null;
  const list = new Set<CollectionSlug>();
  const get = new Set<CollectionSlug>();
  for (const [path, item] of Object.entries(doc.paths)) {
    if (!isJsonObject(item) || !('get' in item)) continue;
    const m = path.match(PATH);
    const slug = m?.[1];
    if (!slug || !isCollectionSlug(slug)) continue;
    (m?.[2] ? get : list).add(slug);
  }
  return list.size + get.size > 0 ? { list, get } : null;
}

/** A 403: what the Partners API never answers for a key it refuses (401), but other servers do (Payload's `/api`). */
const forbidden = (err: unknown): err is UpstreamError => isUpstreamError(err) && err.status === 403;

/**
 * `baseUrl` is not the Partners API's origin: its routes answer 403 where the API answers 401 for a refused key,
 * its public description included. The message is what follows "baseUrl <url>" (`US_WRONG_BASE_URL`; exit 1, as
 * `US_NOT_FOUND` for a path where nothing answers).
 */
export class WrongBaseUrlError extends UnderstudyError {
  constructor(readonly answer: UpstreamError) {
    const said = (answer.upstreamMessage ?? 'Forbidden').replace(/\.+$/, '');
    super(
      'US_WRONG_BASE_URL',
      `looks wrong: its routes answer 403 (${said}) where the Partners API answers 200, or 401 for a refused key`,
      { cause: answer },
    );
  }
}

/**
 * Learns what the upstream serves: from its OpenAPI description, else by probing each list route with
 * `limit=1` (a 404 or 405 means "not served"; get-by-id is then assumed wherever it is needed). Throws the
 * description's error when the upstream cannot be reached, `US_NOT_FOUND` when no list route is served, and
 * `US_WRONG_BASE_URL` (baseUrl looks wrong) when the public description and a list route both answer 403.
 */
export async function discoverRoutes(client: PartnersClient, opts: CallOptions): Promise<ReadRoutes> {
  // The description is a public route: a 403 there says the server is not the Partners API, not that the key is
  // refused, once a list route answers 403 too (Payload's own `/api` refuses the API-key header so).
  let described403: UpstreamError | null = null;
  try {
    const fromDoc = routesFromOpenApi(await client.openapi(opts));
    if (fromDoc) return { ...fromDoc, source: 'openapi' };
  } catch (err) {
    // A refused key, a stop, or a wait for the budget given up (parked): probing would meet the same. So would an
    // upstream that cannot be reached at all (no answer after every retry): say so, rather than name a collection.
    if (forbidden(err)) described403 = err;
    else if (hasCode(err, 'US_AUTH') || isStop(err)) throw err;
    if (isUpstreamError(err) && err.status === 0) throw err;
    if (opts.signal.aborted) throw err;
  }
  const list = new Set<CollectionSlug>();
  let forbiddenAll: UpstreamError | null = null;
  for (const c of COLLECTIONS) {
    try {
      await client.listPage({ collection: c, limit: 1, depth: 0 }, opts);
      list.add(c);
    } catch (err) {
      if (forbidden(err) && described403) throw new WrongBaseUrlError(described403);
      if (forbidden(err) && list.size === 0) {
        forbiddenAll = err;
        continue;
      }
      const code = codeOf(err);
      if (code !== 'US_NOT_FOUND' && code !== 'US_UPSTREAM') throw err;
    }
  }
  if (forbiddenAll) throw list.size === 0 ? new WrongBaseUrlError(forbiddenAll) : forbiddenAll;
  // Not one list route answered: this is not the API (a wrong path in baseUrl, or another server). Mirroring
  // nothing and calling it a success would hide that.
  if (list.size === 0)
    throw new UnderstudyError(
      'US_NOT_FOUND',
      "nothing could be read: the API description and every collection's list route answered 404; check baseUrl " +
        "(the API's origin, e.g. https://partners.example.org, without /partners/…)",
    );
  return { list, get: new Set(COLLECTIONS), source: 'probe' };
}
