import { COLLECTIONS, type CollectionSlug } from '../vocabulary/collections.js';
import type { JsonObject } from '../vocabulary/ids.js';
import { parseParams } from './parse-params.js';
import { generateTenants } from './sim-db.js';
import { buildOpenApi } from './sim-openapi.js';
import { type ShapeCtx, shapeDoc } from './sim-shape.js';
import type { SimState } from './sim-state.js';

/**
 * Depth-0 samples of each collection from a tiny data set of the seed, so the description never waits for a large
 * one. The same seed gives the same samples (serve's description reuses them).
 */
export function sampleRecords(
  s: Pick<SimState, 'seed' | 'maxLimit' | 'origin'>,
): Partial<Record<CollectionSlug, JsonObject>> {
  const t = generateTenants({ seed: s.seed, tenants: 1, records: 2, keys: {} })[0];
  const samples: Partial<Record<CollectionSlug, JsonObject>> = {};
  if (!t) return samples;
  const ctx: ShapeCtx = { tenant: t, params: parseParams('depth=0', { maxLimit: s.maxLimit }), origin: s.origin };
  for (const c of COLLECTIONS) {
    const rec = t.collections[c].byId.values().next().value;
    if (rec) samples[c] = shapeDoc(c, rec.main, ctx, 0);
  }
  return samples;
}

/** The openapi document, built once per simulator from depth-0 samples of the first tenant. */
export function openapiDoc(s: SimState): JsonObject {
  s.openapi ??= buildOpenApi(s.routeSet, sampleRecords(s));
  return s.openapi;
}
