import { hash } from 'node:crypto';
import type { CollectionCopies } from '../store/reads/read-spec.js';
import type { JsonObject } from '../vocabulary/ids.js';

const later = (a: string | null, b: string | null): string | null =>
  a === null ? b : b === null ? a : Date.parse(a) >= Date.parse(b) ? a : b;

/** The newest `updatedAt` of the records served, or null. */
function newestUpdate(docs: readonly JsonObject[]): number | null {
  let best: number | null = null;
  for (const d of docs) {
    const t = typeof d.updatedAt === 'string' ? Date.parse(d.updatedAt) : Number.NaN;
    if (!Number.isNaN(t) && (best === null || t > best)) best = t;
  }
  return best;
}

/**
 * The freshness of an answer: an `ETag` of its body (any served record that changes changes it), `Last-Modified`
 * the newest `updatedAt` served, and `X-Understudy-Synced-At` the last time the copy was passed, or the collection
 * probed by watch, without a failure.
 */
export function freshnessHeaders(
  body: string,
  docs: readonly JsonObject[],
  copies: CollectionCopies,
  variant: string,
): Record<string, string> {
  const out: Record<string, string> = { etag: `"${hash('sha1', body, 'base64url')}"` };
  const newest = newestUpdate(docs);
  if (newest !== null) out['last-modified'] = new Date(newest).toUTCString();
  const synced = later(copies.variants.get(variant) ?? null, copies.probedAt);
  if (synced !== null) out['x-understudy-synced-at'] = new Date(Date.parse(synced)).toISOString();
  return out;
}

/** Whether `If-None-Match` names the answer's ETag (weak comparison, `*` for any). */
export function notModified(ifNoneMatch: string | undefined, etag: string | undefined): boolean {
  if (!ifNoneMatch || !etag) return false;
  const bare = (t: string) => t.trim().replace(/^W\//, '');
  return ifNoneMatch.split(',').some((t) => t.trim() === '*' || bare(t) === bare(etag));
}
