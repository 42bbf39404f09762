import { UsageError } from '../../errors.js';
import { PRODUCTION, queryWords, type SearchHit, type SearchQuery, type Word, wordsLength } from '../search-query.js';
import { openReadOnlyDatabase } from './read-only-database.js';

/** One word as an FTS5 string: quoted, so `-`, `:`, `"` or `OR` are words, never operators; `*` kept as a prefix. */
const ftsWord = (w: Word): string => `"${w.text.replace(/"/g, '""')}"${w.prefix ? '*' : ''}`;

/**
 * The parameters of `SQLITE_SEARCH`: the FTS5 expressions `q`, every word anywhere; `start`, the words as a phrase
 * from the title's first token; `phrase`, as a phrase anywhere in the title; `title`, every word in the title.
 */
function sqliteParams(q: SearchQuery) {
  const words = queryWords(q.text);
  const fts = words.map(ftsWord);
  const phrase = fts.join(' + ');
  return {
    q: fts.join(' '),
    start: `{title} : ^ ${phrase}`,
    phrase: `{title} : ${phrase}`,
    title: `{title} : (${fts.join(' ')})`,
    // One word: in the title as a phrase whenever it is in the title at all (tier 2 needs no phrase query).
    one: words.length === 1 ? 1 : 0,
    chars: wordsLength(words),
    bound: TIER_0_BOUND,
    tenant: q.tenant ?? null,
    collection: q.collection ?? null,
    limit: q.limit,
  };
}

/**
 * The most matches tier 0 ranks by bm25: FTS5 scores every match it sorts (about 1 µs each, 40 ms for 60,000).
 * Past it, tier 0 ranks only the newest this many (highest `doc_id`) of the matches in the tenant and collection
 * asked for. So many matches make the words common: bm25's idf for a word in half the records or more is nil (FTS5
 * floors it at 1e-6), so the order it gave over all of them was close to noise.
 */
export const TIER_0_BOUND = 10_000;

const inMatch = (expression: string) =>
  `d.doc_id IN (SELECT rowid FROM search_fts WHERE search_fts MATCH ${expression})`;
const FILTERS = '(:tenant IS NULL OR d.tenant = :tenant) AND (:collection IS NULL OR d.collection = :collection)';

/**
 * The title hits (every word in the title: tiers 3 to 1, found once), then the rest (tier 0). A title hit's tier
 * is told apart only for a production; its fraction is the share of the title the words make up. The rest are
 * ranked by bm25 (weights title 10, body 1, venue 4; FTS5 sorts by `rank` itself), squashed into [0, 1), and only
 * while the title hits leave room under the limit: a work's title never ranks every record that mentions it.
 * Past TIER_0_BOUND matches, bm25 ranks the newest of them only (`newest`: the lowest doc_id it takes, found by
 * reading the matches backwards; FTS5 then reads that rowid range alone). One word is a phrase in every title
 * holding it, so its tier 2 needs no phrase query. Snippets are made for the hits kept only.
 */
const SQLITE_SEARCH = `WITH titled AS MATERIALIZED (SELECT rowid AS doc_id FROM search_fts WHERE search_fts MATCH :title),
newest(doc_id) AS (SELECT coalesce(CASE WHEN :tenant IS NULL AND :collection IS NULL
    THEN (SELECT rowid FROM search_fts WHERE search_fts MATCH :q ORDER BY rowid DESC LIMIT 1 OFFSET :bound - 1)
    ELSE (SELECT d.doc_id FROM search_fts JOIN search_docs d ON d.doc_id = search_fts.rowid
      WHERE search_fts MATCH :q AND ${FILTERS} ORDER BY search_fts.rowid DESC LIMIT 1 OFFSET :bound - 1) END, 0)),
best AS (
  SELECT * FROM (
    SELECT d.doc_id,
      CASE WHEN NOT ${PRODUCTION} THEN 1 WHEN ${inMatch(':start')} THEN 3 WHEN :one OR ${inMatch(':phrase')} THEN 2 ELSE 1 END
        + min(:chars, length(d.title)) * 1.0 / (1 + length(d.title)) AS rank
    FROM titled JOIN search_docs d ON d.doc_id = titled.doc_id
    WHERE ${FILTERS}
    ORDER BY rank DESC, d.doc_id LIMIT :limit)
  UNION ALL
  SELECT * FROM (
    SELECT d.doc_id, 1 - 1 / (1 - search_fts.rank) AS rank
    FROM search_fts JOIN search_docs d ON d.doc_id = search_fts.rowid
    WHERE search_fts MATCH :q AND d.doc_id NOT IN (SELECT doc_id FROM titled) AND ${FILTERS}
      AND search_fts.rowid >= (SELECT doc_id FROM newest)
    ORDER BY search_fts.rank LIMIT :limit)
  LIMIT :limit)
SELECT d.collection, d.tenant, d.id, d.title, snippet(search_fts, -1, '[', ']', '…', 12) AS snippet, best.rank
-- CROSS JOIN keeps best outermost: each hit kept is looked up by rowid, rather than every match scanned for it.
FROM best CROSS JOIN search_fts CROSS JOIN search_docs d
WHERE search_fts.rowid = best.doc_id AND search_fts MATCH :q AND d.doc_id = best.doc_id
ORDER BY best.rank DESC, d.doc_id`;

/** Runs `q` over the SQLite mirror at `path`, opened read-only; best first (see `searchMirror`). */
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
    return stmt.all(sqliteParams(q)) as SearchHit[];
  } finally {
    db.close();
  }
}
