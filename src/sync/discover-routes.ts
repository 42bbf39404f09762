import { UnderstudyError, UpstreamError } from '../errors.js';
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

/**
 * Learns what the upstream serves: from its OpenAPI description, else by probing each list route with
 * `limit=1` (a 404 or 405 means "not served"; get-by-id is then assumed wherever it is needed). Throws the
 * description's error when the upstream cannot be reached, and `US_NOT_FOUND` when no list route is served.
 */
export async function discoverRoutes(client: PartnersClient, opts: CallOptions): Promise<ReadRoutes> {
  try {
    const fromDoc = routesFromOpenApi(await client.openapi(opts));
    if (fromDoc) return { ...fromDoc, source: 'openapi' };
  } catch (err) {
    // A refused key, a stop, or a wait for the budget given up (parked): probing would meet the same. So would an
    // upstream that cannot be reached at all (no answer after every retry): say so, rather than name a collection.
    if (err instanceof UnderstudyError && (err.code === 'US_AUTH' || err.code === 'US_ABORTED')) throw err;
    if (err instanceof UpstreamError && err.status === 0) throw err;
    if (opts.signal.aborted) throw err;
  }
  const list = new Set<CollectionSlug>();
  for (const c of COLLECTIONS) {
    try {
      await client.listPage({ collection: c, limit: 1, depth: 0 }, opts);
      list.add(c);
    } catch (err) {
      if (!(err instanceof UnderstudyError) || (err.code !== 'US_NOT_FOUND' && err.code !== 'US_UPSTREAM')) throw err;
    }
  }
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
