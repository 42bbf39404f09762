import {
  BULK_ROUTES,
  isCollectionSlug,
  type RouteOp,
  routesFor,
  THEME_SCHEMA_COLLECTIONS,
} from '../vocabulary/collections.js';
import { SimHttpError } from './sim-query.js';
import type { SimState } from './sim-state.js';

/** The answer to a method the path does not serve: 405 with `Allow`, or 404 when it serves none. */
export const routeMissing = (allowed: string[]): SimHttpError =>
  allowed.length
    ? new SimHttpError(405, 'Method Not Allowed', undefined, { allow: allowed.join(', ') })
    : new SimHttpError(404, 'Route Not Found');

const METHOD_OF: Record<RouteOp, string> = {
  list: 'GET',
  get: 'GET',
  create: 'POST',
  put: 'PUT',
  patch: 'PATCH',
  delete: 'DELETE',
};

/** The methods served on a data path (after `/{version}/{tenant}`) under the route set; HEAD goes with GET. */
export function allowedMethods(s: SimState, rest: readonly string[]): string[] {
  const head = rest[0] ?? '';
  if (!isCollectionSlug(head)) return [];
  const served = routesFor(head, s.routeSet);
  const methods: string[] = [];
  const add = (m: string): void => {
    if (!methods.includes(m)) methods.push(m);
    if (m === 'GET') add('HEAD');
  };
  if (rest.length === 1) {
    for (const op of served) if (op === 'list' || op === 'create') add(METHOD_OF[op]);
    // Payload's bulk update and delete (`where` in the query) belong to its REST surface.
    if (s.routeSet === 'full') for (const m of ['PATCH', 'DELETE']) add(m);
  } else if (rest.length === 2) {
    if (BULK_ROUTES.some((b) => b.collection === head && b.kind === rest[1])) add('PATCH');
    else for (const op of served) if (op !== 'list' && op !== 'create') add(METHOD_OF[op]);
  } else if (rest.length === 3 && rest[1] === 'theme-settings' && rest[2] === 'schema') {
    if (THEME_SCHEMA_COLLECTIONS.includes(head)) add('GET');
  }
  return methods;
}
