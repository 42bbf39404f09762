import { BadResponseError } from '../errors.js';
import type { Where } from '../partners/partners-client.js';
import type { CollectionSlug } from '../vocabulary/collections.js';
import type { UpstreamDoc } from '../vocabulary/ids.js';
import type { Position } from './store-port.js';

/** The field that breaks updatedAt ties in sync order: `id`, or `filename` for media, which carry no id. */
export const keyFieldFor = (c: CollectionSlug): string => (c === 'media' ? 'filename' : 'id');

/** Whether a record's `updatedAt` is a date sync can page by (a string that parses as an instant). */
export const isDated = (doc: UpstreamDoc): boolean =>
  typeof doc.updatedAt === 'string' && !Number.isNaN(Date.parse(doc.updatedAt));

/**
 * Where a record sits in (updatedAt, key) order; null when its `updatedAt` is null or not a date (such a record
 * is mirrored, but cannot carry a position). Throws when the upstream sent a record without its key.
 */
export function positionOf(doc: UpstreamDoc, keyField: string, route: string): Position | null {
  const key = doc[keyField];
  if (typeof key !== 'string' && typeof key !== 'number' && typeof key !== 'bigint') {
    throw new BadResponseError('GET', route, `a record has no ${keyField}`);
  }
  return isDated(doc) ? { updatedAt: doc.updatedAt as string, id: String(key) } : null;
}

const compareIds = (a: string, b: string): number => {
  if (/^\d+$/.test(a) && /^\d+$/.test(b)) return Math.sign(Number(a) - Number(b));
  return a < b ? -1 : a > b ? 1 : 0;
};

/** Orders positions as the upstream sorts `updatedAt,id`: instants first, then ids (numerically when both are). */
export function comparePositions(a: Position, b: Position): number {
  const t = Date.parse(a.updatedAt) - Date.parse(b.updatedAt);
  return t !== 0 ? Math.sign(t) : compareIds(a.id, b.id);
}

/** The earlier of two positions (null counts as no bound). */
export const earlierOf = (a: Position | null, b: Position | null): Position | null => {
  if (!a) return b;
  if (!b) return a;
  return comparePositions(a, b) <= 0 ? a : b;
};

export const laterOf = (a: Position | null, b: Position | null): Position | null => {
  if (!a) return b;
  if (!b) return a;
  return comparePositions(a, b) >= 0 ? a : b;
};

/**
 * Records strictly after `after` in (updatedAt, key) order. Keyset paging rather than page numbers: records edited,
 * created or deleted mid-sync cannot shift later records across a page boundary, and ties on updatedAt are split by key.
 */
export const afterWhere = (after: Position, keyField: string): Where => ({
  or: [
    { updatedAt: { greater_than: after.updatedAt } },
    { and: [{ updatedAt: { equals: after.updatedAt } }, { [keyField]: { greater_than: after.id } }] },
  ],
});

/** Records at or after `since` (an incremental run's first page, which re-reads a small overlap window). */
export const sinceWhere = (since: string): Where => ({ updatedAt: { greater_than_equal: since } });

/** A cursor for a collection that was empty when fully synced: every real record sorts after it. */
export const EPOCH: Position = { updatedAt: '1970-01-01T00:00:00.000Z', id: '' };
