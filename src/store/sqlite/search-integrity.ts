import type BetterSqlite3 from 'better-sqlite3';
import { tableFor } from '../../vocabulary/collections.js';
import { SEARCHED_COLLECTIONS } from '../search-query.js';

/** How the search index differs from what the collection rows say it should hold. */
export interface SearchDrift {
  /** Search rows the live records call for. */
  readonly expected: number;
  /** Rows in `search_docs`. */
  readonly indexed: number;
  /** `collection/tenant/id` keys: live records missing from the index, indexed records not live, wrong text. */
  readonly missing: readonly string[];
  readonly extra: readonly string[];
  readonly wrong: readonly string[];
  /** FTS5's own integrity check of `search_fts` against `search_docs` (with `rank` = 1: contents too). */
  readonly ftsConsistent: boolean;
}

const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/**
 * What `search_docs` should hold, computed in JavaScript from the collection rows: an oracle written apart from
 * the triggers that maintain the index (migrations/2026-11-23-012-search.ts), so the bench and the tests can tell
 * whether the two agree exactly.
 */
function expectedRows(db: BetterSqlite3.Database): Map<string, string> {
  const venues = new Map<string, string | null>();
  for (const v of db.prepare('SELECT tenant, id, title FROM venues WHERE deleted_at IS NULL').all() as {
    tenant: string;
    id: string;
    title: string | null;
  }[])
    venues.set(`${v.tenant}\u0000${v.id}`, v.title);
  const out = new Map<string, string>();
  for (const collection of SEARCHED_COLLECTIONS) {
    const rows = db.prepare(`SELECT * FROM ${tableFor(collection)} WHERE deleted_at IS NULL`).all() as Record<
      string,
      unknown
    >[];
    for (const r of rows) {
      const doc = JSON.parse(String(r.doc)) as Record<string, unknown>;
      const title =
        collection === 'organizations'
          ? text(r.name)
          : collection === 'media'
            ? (text(r.alt) ?? text(r.filename))
            : text(r.title);
      const body = text(doc[collection === 'media' ? 'caption' : 'description']);
      const venue =
        collection === 'events'
          ? (venues.get(`${r.tenant}\u0000${r.venue_id}`) ?? null)
          : collection === 'venues'
            ? text(r.city)
            : null;
      out.set(`${collection}/${r.tenant}/${r.id}`, JSON.stringify([title, body, venue]));
    }
  }
  return out;
}

/** Compares the search index of the (writable) SQLite mirror `db` with its rows; see `SearchDrift`. */
export function searchDrift(db: BetterSqlite3.Database): SearchDrift {
  const expected = expectedRows(db);
  const indexed = new Map<string, string>();
  for (const r of db.prepare('SELECT collection, tenant, id, title, body, venue FROM search_docs').all() as {
    collection: string;
    tenant: string;
    id: string;
    title: string | null;
    body: string | null;
    venue: string | null;
  }[])
    indexed.set(`${r.collection}/${r.tenant}/${r.id}`, JSON.stringify([r.title, r.body, r.venue]));
  let ftsConsistent = true;
  try {
    db.exec(`INSERT INTO search_fts (search_fts, rank) VALUES ('integrity-check', 1)`);
  } catch {
    ftsConsistent = false;
  }
  return {
    expected: expected.size,
    indexed: indexed.size,
    missing: [...expected.keys()].filter((k) => !indexed.has(k)),
    extra: [...indexed.keys()].filter((k) => !expected.has(k)),
    wrong: [...expected].filter(([k, v]) => indexed.has(k) && indexed.get(k) !== v).map(([k]) => k),
    ftsConsistent,
  };
}
