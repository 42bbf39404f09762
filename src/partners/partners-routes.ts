import { API_VERSION, type BulkKind, type CollectionSlug } from '../vocabulary/collections.js';
import { isJsonObject, type JsonObject, type RecordId, type TenantSlug, type UpstreamDoc } from '../vocabulary/ids.js';
import { parseListEnvelope } from './list-envelope.js';
import type { BulkResult, ListPage, PartnersClient, Reserve, ThemeSettingsSchema } from './partners-client.js';
import { toQueryString, withQuery } from './query-string.js';
import type { Send, Shape } from './upstream-call.js';

const objectShape: Shape<JsonObject> = (json) =>
  isJsonObject(json) ? { ok: true, value: json } : { ok: false, message: 'expected a JSON object' };

/** Writes may answer `{doc, message}` or the bare record. */
const recordShape: Shape<UpstreamDoc> = (json) => {
  if (!isJsonObject(json)) return { ok: false, message: 'expected a JSON object' };
  const { doc } = json;
  if (isJsonObject(doc) && Object.keys(json).every((k) => k === 'doc' || k === 'message'))
    return { ok: true, value: doc };
  return { ok: true, value: json };
};

/** A list answer: the envelope validated and normalised against what was asked (list-envelope.ts). */
const listShape =
  (asked: Parameters<typeof parseListEnvelope>[1]): Shape<ListPage> =>
  (json) => {
    const parsed = parseListEnvelope(json, asked);
    return parsed.ok ? { ok: true, value: parsed.page } : parsed;
  };

const TENANT_ROUTE = '/partners/{version}/{tenant}';
const seg = (s: string) => encodeURIComponent(s);

/**
 * The Content Partners API for one tenant, as a route table: which request each `PartnersClient` method makes
 * (method, route template, path, body, whether the key goes with it, and how its answer reads). How the request
 * is sent, paced, retried, capped and parsed is `send`'s: the layers the composition root stacks (`createApp`);
 * `reserve` takes a sequence's budget at the same key's gate (`reserveAtGate`).
 */
export function partnersRoutes(tenant: TenantSlug, send: Send, reserve: Reserve): PartnersClient {
  if (typeof tenant !== 'string' || tenant.length === 0) throw new TypeError('tenant must be non-empty');
  const tenantPath = `/partners/${API_VERSION}/${encodeURIComponent(tenant)}`;
  const collectionPath = (c: CollectionSlug, id?: RecordId) =>
    id === undefined ? `${tenantPath}/${seg(c)}` : `${tenantPath}/${seg(c)}/${seg(id)}`;
  const collectionRoute = (c: CollectionSlug, id?: RecordId) =>
    id === undefined ? `${TENANT_ROUTE}/${c}` : `${TENANT_ROUTE}/${c}/{id}`;
  return {
    tenant,
    reserve,
    listPage({ collection, ...rest }, opts) {
      const path = withQuery(collectionPath(collection), toQueryString(rest));
      const route = collectionRoute(collection);
      return send({ method: 'GET', route, path, auth: true, shape: listShape(rest) }, opts);
    },
    getById(collection, id, q, opts) {
      const path = withQuery(collectionPath(collection, id), toQueryString(q));
      const route = collectionRoute(collection, id);
      return send({ method: 'GET', route, path, auth: true, shape: objectShape }, opts);
    },
    themeSettingsSchema(collection, opts): Promise<ThemeSettingsSchema> {
      const path = `${collectionPath(collection)}/theme-settings/schema`;
      const route = `${collectionRoute(collection)}/theme-settings/schema`;
      return send({ method: 'GET', route, path, auth: true, shape: objectShape }, opts);
    },
    openapi(opts) {
      const path = `/partners/${API_VERSION}/openapi`;
      return send({ method: 'GET', route: '/partners/{version}/openapi', path, auth: false, shape: objectShape }, opts);
    },
    create(collection, body, q, opts) {
      const path = withQuery(collectionPath(collection), toQueryString(q));
      const route = collectionRoute(collection);
      return send({ method: 'POST', route, path, body, auth: true, shape: recordShape }, opts);
    },
    update(collection, id, method, body, q, opts) {
      const path = withQuery(collectionPath(collection, id), toQueryString(q));
      const route = collectionRoute(collection, id);
      return send({ method, route, path, body, auth: true, shape: recordShape }, opts);
    },
    delete(collection, id, opts) {
      const path = collectionPath(collection, id);
      const route = collectionRoute(collection, id);
      return send({ method: 'DELETE', route, path, auth: true, shape: recordShape }, opts);
    },
    bulk(collection: CollectionSlug, kind: BulkKind, body, q, opts): Promise<BulkResult> {
      const path = withQuery(`${collectionPath(collection)}/${seg(kind)}`, toQueryString(q));
      const route = `${collectionRoute(collection)}/${kind}`;
      return send({ method: 'PATCH', route, path, body, auth: true, shape: objectShape }, opts);
    },
  };
}
