import type { IncomingMessage } from 'node:http';
import {
  BULK_ROUTES,
  type BulkKind,
  type CollectionSlug,
  isCollectionSlug,
  type RouteOp,
  routesFor,
  THEME_SCHEMA_COLLECTIONS,
} from '../vocabulary/collections.js';
import type { JsonValue } from '../vocabulary/ids.js';
import { parseParams, type SimParams } from './parse-params.js';
import { allowedMethods, routeMissing } from './sim-allowed-methods.js';
import { bulkUpdate } from './sim-bulk.js';
import { bulkByWhere } from './sim-bulk-where.js';
import type { TenantData } from './sim-db.js';
import { viewOf } from './sim-db.js';
import { SimHttpError } from './sim-query.js';
import { getDoc, listDocs, notFound } from './sim-read.js';
import { readBody } from './sim-read-body.js';
import { shapeDoc } from './sim-shape.js';
import { type SimState, shapeCtx } from './sim-state.js';
import { themeSettingsSchema } from './sim-theme-schema.js';
import { createDoc, deleteDoc, updateDoc, type WriteResult } from './sim-writes.js';

export interface RouteAnswer {
  readonly status: number;
  readonly body: JsonValue;
}

/** An authorised data request: whose it is, the method and the path after `/{version}/{tenant}`. */
export interface RouteCall {
  readonly tenant: TenantData;
  readonly method: string;
  readonly rest: readonly string[];
  /** The query string (as a fault may have changed it). */
  readonly query: string;
}

/** One data request against one collection, with what its path serves. */
interface CollectionCall {
  readonly s: SimState;
  readonly req: IncomingMessage;
  readonly tenant: TenantData;
  readonly c: CollectionSlug;
  /** The method, HEAD read as GET (Node leaves out the body; the headers, content-length included, are the GET's). */
  readonly verb: string;
  readonly served: readonly RouteOp[];
  readonly allowed: string[];
  readonly query: string;
}

const paramsOf = (k: CollectionCall): SimParams => parseParams(k.query, { maxLimit: k.s.maxLimit });

/** A written record as the write's answer shows it (read back as a draft when the write addressed the draft). */
const shapeWritten = (k: CollectionCall, p: SimParams, r: WriteResult): JsonValue =>
  shapeDoc(k.c, r.stored, shapeCtx(k.s, k.tenant, { ...p, draft: r.draft }), p.depth);

async function createRoute(k: CollectionCall): Promise<RouteAnswer> {
  const p = paramsOf(k);
  const body = await readBody(k.req, k.c);
  return { status: 201, body: shapeWritten(k, p, createDoc(k.s, k.tenant, k.c, body, p)) };
}

/** Payload's bulk update and delete of every record matching `where`. */
async function manyRoute(k: CollectionCall): Promise<RouteAnswer> {
  const body = k.verb === 'PATCH' ? await readBody(k.req, k.c) : undefined;
  return bulkByWhere(k.s, k.tenant, k.c, k.verb === 'PATCH' ? 'update' : 'delete', paramsOf(k), body);
}

/** `/{collection}`: list, create, and the bulk update and delete by `where`. */
function collectionRoute(k: CollectionCall): Promise<RouteAnswer> | RouteAnswer {
  if (k.verb === 'GET' && k.served.includes('list'))
    return { status: 200, body: listDocs(k.c, shapeCtx(k.s, k.tenant, paramsOf(k))) };
  if (k.verb === 'POST' && k.served.includes('create')) return createRoute(k);
  if ((k.verb === 'PATCH' || k.verb === 'DELETE') && k.allowed.includes(k.verb)) return manyRoute(k);
  throw routeMissing(k.allowed);
}

/** `PATCH /{collection}/{kind}`: the bulk set/unset of custom attributes or theme settings. */
async function bulkRoute(k: CollectionCall, kind: BulkKind): Promise<RouteAnswer> {
  if (k.verb !== 'PATCH') throw routeMissing(k.allowed);
  const p = paramsOf(k);
  const body = await readBody(k.req, k.c);
  return { status: 200, body: bulkUpdate(k.s, k.tenant, k.c, kind, body, p) };
}

async function updateRoute(k: CollectionCall, id: string): Promise<RouteAnswer> {
  const p = paramsOf(k);
  const body = await readBody(k.req, k.c);
  const r = updateDoc(k.s, k.tenant, k.c, id, body, p, k.verb === 'PUT' ? 'put' : 'patch');
  return { status: 200, body: shapeWritten(k, p, r) };
}

/** Payload's deleteByID handler: the record as it was (depth and query ignored), wrapped (`general:deletedSuccessfully`). */
function deleteRoute(k: CollectionCall, id: string): RouteAnswer {
  const rec = k.tenant.collections[k.c].byId.get(id);
  if (!rec) throw notFound();
  const p = parseParams('', { maxLimit: k.s.maxLimit });
  const doc = shapeDoc(k.c, viewOf(rec, false), shapeCtx(k.s, k.tenant, p), p.depth);
  deleteDoc(k.tenant, k.c, id);
  return { status: 200, body: { doc, message: 'Deleted successfully.' } };
}

/** `/{collection}/{id}` (or a bulk route's `/{collection}/{kind}`). */
function itemRoute(k: CollectionCall, second: string): Promise<RouteAnswer> | RouteAnswer {
  const bulk = BULK_ROUTES.find((b) => b.collection === k.c && b.kind === second);
  if (bulk) return bulkRoute(k, bulk.kind);
  if (k.verb === 'GET' && k.served.includes('get'))
    return { status: 200, body: getDoc(k.c, second, shapeCtx(k.s, k.tenant, paramsOf(k))) };
  if ((k.verb === 'PUT' && k.served.includes('put')) || (k.verb === 'PATCH' && k.served.includes('patch')))
    return updateRoute(k, second);
  if (k.verb === 'DELETE' && k.served.includes('delete')) return deleteRoute(k, second);
  throw routeMissing(k.allowed);
}

const isThemeSchemaPath = (c: CollectionSlug, rest: readonly string[]): boolean =>
  rest.length === 3 && rest[1] === 'theme-settings' && rest[2] === 'schema' && THEME_SCHEMA_COLLECTIONS.includes(c);

/** The data routes after `/{version}/{tenant}`: by the path's length, then by method. */
export async function route(s: SimState, req: IncomingMessage, call: RouteCall): Promise<RouteAnswer> {
  const { rest } = call;
  const head = rest[0] as string;
  if (head === 'graphql' && rest.length === 1)
    throw new SimHttpError(501, 'GraphQL is not supported by the simulator; use the REST routes');
  if (!isCollectionSlug(head)) throw new SimHttpError(404, 'Route Not Found');
  const k: CollectionCall = {
    s,
    req,
    tenant: call.tenant,
    c: head,
    verb: call.method === 'HEAD' ? 'GET' : call.method,
    served: routesFor(head, s.routeSet),
    allowed: allowedMethods(s, rest),
    query: call.query,
  };
  if (rest.length === 1) return collectionRoute(k);
  if (rest.length === 2) return itemRoute(k, rest[1] as string);
  if (!isThemeSchemaPath(head, rest)) throw new SimHttpError(404, 'Route Not Found');
  if (k.verb !== 'GET') throw routeMissing(k.allowed);
  return { status: 200, body: themeSettingsSchema(head) };
}
