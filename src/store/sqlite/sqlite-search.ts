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
    chars: wordsLength(words),
    tenant: q.tenant ?? null,
    collection: q.collection ?? null,
    limit: q.limit,
  };
}

const inMatch = (expression: string) =>
  `d.doc_id IN (SELECT rowid FROM search_fts WHERE search_fts MATCH ${expression})`;
const FILTERS = '(:tenant IS NULL OR d.tenant = :tenant) AND (:collection IS NULL OR d.collection = :collection)';

/**
 * The title hits (every word in the title: tiers 3 to 1, found once), then the rest (tier 0). A title hit's tier
 * is told apart only for a production; its fraction is the share of the title the words make up. The rest are
 * ranked by bm25 (weights title 10, body 1, venue 4; FTS5 sorts by `rank` itself), squashed into [0, 1), and only
 * while the title hits leave room under the limit: a work's title never ranks every record that mentions it.
 * Snippets are made for the hits kept only.
 */
const SQLITE_SEARCH = `WITH titled AS MATERIALIZED (SELECT rowid AS doc_id FROM search_fts WHERE search_fts MATCH :title),
best AS (
  SELECT * FROM (
    SELECT d.doc_id,
      CASE WHEN NOT ${PRODUCTION} THEN 1 WHEN ${inMatch(':start')} THEN 3 WHEN ${inMatch(':phrase')} THEN 2 ELSE 1 END
        + min(:chars, length(d.title)) * 1.0 / (1 + length(d.title)) AS rank
    FROM titled JOIN search_docs d ON d.doc_id = titled.doc_id
    WHERE ${FILTERS}
    ORDER BY rank DESC, d.doc_id LIMIT :limit)
  UNION ALL
  SELECT * FROM (
    SELECT d.doc_id, 1 - 1 / (1 - search_fts.rank) AS rank
    FROM search_fts JOIN search_docs d ON d.doc_id = search_fts.rowid
    WHERE search_fts MATCH :q AND d.doc_id NOT IN (SELECT doc_id FROM titled) AND ${FILTERS}
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
