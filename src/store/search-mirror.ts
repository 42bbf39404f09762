import { type RawBuilder, sql } from 'kysely';
import { UsageError } from '../errors.js';
import { COLLECTIONS, type CollectionSlug } from '../vocabulary/collections.js';
import { connectPostgres, isPostgresUrl } from './postgres-engine.js';
import { openReadOnlyDatabase } from './read-only-query.js';

/** A ranked full-text search over the mirror's `search_docs` (see docs/schema.md, "Full-text search"). */
export interface SearchQuery {
  /** The words; every one must match (a word ending in `*` matches as a prefix). */
  readonly text: string;
  readonly tenant?: string;
  /** Collection slug as in the API path (`events`). */
  readonly collection?: string;
  readonly limit: number;
}

export interface SearchHit {
  readonly collection: string;
  readonly tenant: string;
  readonly id: string;
  readonly title: string | null;
  /** The best-matching passage, matched words in [brackets]. */
  readonly snippet: string;
  /** Relevance: higher is better; hits come best first. */
  readonly rank: number;
}

/** Collections without a title or name, so not in `search_docs` (frozen by migration 2026-11-23-012). */
const UNSEARCHED: readonly CollectionSlug[] = ['event-instances', 'redirects', 'custom-attributes'];
/** Collections `search_docs` indexes. */
export const SEARCHED_COLLECTIONS: readonly CollectionSlug[] = COLLECTIONS.filter((c) => !UNSEARCHED.includes(c));

/**
 * The user's words as an FTS5 query: each word quoted (so `-`, `:`, `"` or `OR` are words, never operators), all
 * required; a trailing `*` keeps its meaning (prefix). Throws `US_USAGE` when there is no word.
 */
export function ftsQuery(text: string): string {
  const words = text.split(/\s+/).filter((w) => w !== '' && w !== '*');
  if (words.length === 0) throw new UsageError('search: give at least one word to look for');
  return words
    .map((w) => {
      const prefix = w.endsWith('*');
      const bare = prefix ? w.slice(0, -1) : w;
      return `"${bare.replace(/"/g, '""')}"${prefix ? '*' : ''}`;
    })
    .join(' ');
}

const SQLITE_SEARCH = `SELECT d.collection, d.tenant, d.id, d.title,
  snippet(search_fts, -1, '[', ']', '…', 12) AS snippet, -search_fts.rank AS rank
FROM search_fts JOIN search_docs d ON d.doc_id = search_fts.rowid
WHERE search_fts MATCH :q AND (:tenant IS NULL OR d.tenant = :tenant)
  AND (:collection IS NULL OR d.collection = :collection)
ORDER BY search_fts.rank LIMIT :limit`;

/**
 * The words as a PostgreSQL tsquery over the `simple` configuration, with the same meaning as `ftsQuery`: every
 * word required, a trailing `*` a prefix.
 */
function tsQuery(text: string): RawBuilder<unknown> {
  ftsQuery(text); // the same refusal of no words
  // Accents off, as the index has them (migration 2026-11-23-012).
  const parts = text
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .split(/\s+/)
    .filter((w) => w !== '' && w !== '*')
    .map((w) => {
      if (!w.endsWith('*')) return sql`plainto_tsquery('simple', ${w})`;
      const tokens = w.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
      return sql`to_tsquery('simple', ${tokens.map((t, i) => `'${t}'${i === tokens.length - 1 ? ':*' : ''}`).join(' & ')})`;
    });
  return parts.reduce((a, b) => sql`${a} && ${b}`);
}

/** The same search on PostgreSQL: ts_rank_cd over the weighted tsvector (title A, venue B, body D). */
async function searchPostgres(url: string, q: SearchQuery): Promise<SearchHit[]> {
  const engine = await connectPostgres(url, { maxConnections: 1, readOnly: true });
  try {
    const tenant = q.tenant ?? null;
    const collection = q.collection ?? null;
    const { rows } = await sql<SearchHit>`SELECT d.collection, d.tenant, d.id, d.title,
        ts_headline('simple', concat_ws(' ', d.title, d.venue, d.body), w.q,
          'StartSel=[, StopSel=], MaxWords=12, MinWords=4') AS snippet,
        ts_rank_cd(d.tsv, w.q) AS rank
      FROM search_docs d, (SELECT ${tsQuery(q.text)} AS q) w
      WHERE d.tsv @@ w.q AND (${tenant}::text IS NULL OR d.tenant = ${tenant})
        AND (${collection}::text IS NULL OR d.collection = ${collection})
      ORDER BY rank DESC, d.doc_id LIMIT ${q.limit}`.execute(engine.db);
    return rows.map((r) => ({ ...r, rank: Number(r.rank) }));
  } finally {
    await engine.close();
  }
}

/** Runs `q` over the mirror `database` (a SQLite file opened read-only, or a PostgreSQL URL); best first. */
export const searchMirror = (database: string, q: SearchQuery): Promise<SearchHit[]> =>
  isPostgresUrl(database) ? searchPostgres(database, q) : Promise.resolve(searchSqlite(database, q));

/** Runs `q` over the SQLite mirror at `path`, opened read-only; best first. */
export function searchSqlite(path: string, q: SearchQuery): SearchHit[] {
  const db = openReadOnlyDatabase(path);
  try {
    let stmt: ReturnType<typeof db.prepare>;
    try {
      stmt = db.prepare(SQLITE_SEARCH);
    } catch (err) {
      throw new UsageError(
        `search: this mirror has no search index (sync it once to migrate it): ${(err as Error).message}`,
        {
          cause: err,
        },
      );
    }
    const params = { q: ftsQuery(q.text), tenant: q.tenant ?? null, collection: q.collection ?? null, limit: q.limit };
    return stmt.all(params) as SearchHit[];
  } finally {
    db.close();
  }
}
