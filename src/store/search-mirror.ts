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
  /** The hit's tier plus how well it matches within the tier, in [0, 1) (see `searchMirror`): higher is better. */
  readonly rank: number;
}

/** Collections without a title or name, so not in `search_docs` (frozen by migration 2026-11-23-012). */
const UNSEARCHED: readonly CollectionSlug[] = ['event-instances', 'redirects', 'custom-attributes'];
/** Collections `search_docs` indexes. */
export const SEARCHED_COLLECTIONS: readonly CollectionSlug[] = COLLECTIONS.filter((c) => !UNSEARCHED.includes(c));

/**
 * Series and events: a search for a title most likely means one of these. Event instances have no title of their
 * own and are not indexed: an instance is found through its event (`event_instances.event_id`).
 */
const PRODUCTION = `d.collection IN ('series', 'events')`;

interface Word {
  /** The word as typed, without its trailing `*`. */
  readonly text: string;
  /** Ended in `*`: its last token matches as a prefix. */
  readonly prefix: boolean;
}

/** The user's words (split on white space; a lone `*` is no word). Throws `US_USAGE` when there is none. */
function queryWords(text: string): Word[] {
  const words = text.split(/\s+/).filter((w) => w !== '' && w !== '*');
  if (words.length === 0) throw new UsageError('search: give at least one word to look for');
  return words.map((w) => (w.endsWith('*') ? { text: w.slice(0, -1), prefix: true } : { text: w, prefix: false }));
}

/** Accents off, as the index has them (migration 2026-11-23-012). */
const unaccented = (s: string) => s.normalize('NFD').replace(/[\u0300-\u036f]/g, '');
/** A word's tokens as FTS5's `unicode61` tokenizer reads them: runs of letters and digits, lower case, no accents. */
const tokens = (s: string): string[] =>
  unaccented(s)
    .toLowerCase()
    .match(/[\p{L}\p{N}]+/gu) ?? [];
/** The length of the words as the index reads them (tokens, one space apart): how much of a title they can make up. */
const wordsLength = (words: readonly Word[]): number => words.flatMap((w) => tokens(w.text)).join(' ').length;

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

/**
 * One word as a PostgreSQL tsquery over the `simple` configuration: its tokens all required (`&`) or in order
 * (`<->`); a prefix word's last token matches as a prefix.
 */
function tsWord(w: Word, join: '&' | '<->'): RawBuilder<unknown> {
  const text = unaccented(w.text);
  if (!w.prefix)
    return join === '&' ? sql`plainto_tsquery('simple', ${text})` : sql`phraseto_tsquery('simple', ${text})`;
  const ts = tokens(text);
  return sql`to_tsquery('simple', ${ts.map((t, i) => `'${t}'${i === ts.length - 1 ? ':*' : ''}`).join(` ${join} `)})`;
}

/**
 * `query` restricted to the title: each of its lexemes (as PostgreSQL's parser made them) marked `:A`, the title's
 * weight in `search_docs.tsv`, so the GIN recheck tests it without building a filtered tsvector per row.
 */
const inTitle = (query: RawBuilder<unknown>) =>
  sql`regexp_replace((${query})::text, '(''(?:[^'']|'''')*'')(?::(\\*))?', '\\1:\\2A', 'g')::tsquery`;

/**
 * A regex the accent-free, lower-case title matches when it begins with the words' tokens in order, as FTS5's
 * `{title} : ^ "a" + "b"` does: only separators before the first, between them and after the last.
 */
function startPattern(words: readonly Word[]): string {
  const parts = words.flatMap((w) => {
    const ts = tokens(w.text);
    return ts.map((t, i) => (w.prefix && i === ts.length - 1 ? `${t}[[:alnum:]]*` : t));
  });
  return `^[^[:alnum:]]*${parts.join('[^[:alnum:]]+')}([^[:alnum:]]|$)`;
}

/**
 * The title as the index reads it, lower case: accents stripped from a title that has any (in a UTF8 database, where
 * `normalize` works; an ASCII title skips the cost).
 */
const BARE_TITLE = sql.raw(`lower(CASE WHEN octet_length(d.title) = char_length(d.title)
    OR current_setting('server_encoding') <> 'UTF8' THEN d.title
  ELSE regexp_replace(normalize(d.title, NFD), '[\\u0300-\\u036f]', '', 'g') END)`);

/**
 * The same tiers on PostgreSQL, in one pass over the matches, each hit's rank computed once: a title tier plus the
 * share of the title the words make up, or ts_rank_cd over the weighted tsvector (title A, venue B, body D) squashed
 * into [0, 1). The queries are bound values of immutable functions, which the planner folds into constants.
 */
function postgresRank(words: readonly Word[], all: RawBuilder<unknown>): RawBuilder<unknown> {
  const phrase = words.map((w) => tsWord(w, '<->')).reduce((a, b) => sql`tsquery_phrase(${a}, ${b})`);
  const fit = sql`least(${wordsLength(words)}, char_length(d.title))::float8 / (1 + char_length(d.title))`;
  return sql`CASE
    WHEN NOT d.tsv @@ ${inTitle(all)} THEN 1 - 1 / (1 + ts_rank_cd(d.tsv, ${all}))
    WHEN NOT (${sql.raw(PRODUCTION)} AND d.tsv @@ ${inTitle(phrase)}) THEN 1 + ${fit}
    WHEN ${BARE_TITLE} ~ ${startPattern(words)} THEN 3 + ${fit}
    ELSE 2 + ${fit} END`;
}

async function searchPostgres(url: string, q: SearchQuery): Promise<SearchHit[]> {
  const words = queryWords(q.text);
  const all = words.map((w) => tsWord(w, '&')).reduce((a, b) => sql`(${a} && ${b})`);
  const engine = await connectPostgres(url, { maxConnections: 1, readOnly: true });
  try {
    const tenant = q.tenant ?? null;
    const collection = q.collection ?? null;
    const { rows } = await sql<SearchHit>`WITH best AS (
        SELECT d.doc_id, ${postgresRank(words, all)} AS rank
        FROM search_docs d
        WHERE d.tsv @@ ${all} AND (${tenant}::text IS NULL OR d.tenant = ${tenant})
          AND (${collection}::text IS NULL OR d.collection = ${collection})
        ORDER BY rank DESC, d.doc_id LIMIT ${q.limit})
      SELECT d.collection, d.tenant, d.id, d.title,
        ts_headline('simple', concat_ws(' ', d.title, d.venue, d.body), ${all},
          'StartSel=[, StopSel=], MaxWords=12, MinWords=4') AS snippet,
        best.rank::float8 AS rank
      FROM best JOIN search_docs d ON d.doc_id = best.doc_id
      ORDER BY best.rank DESC, d.doc_id`.execute(engine.db);
    return rows.map((r) => ({ ...r, rank: Number(r.rank) }));
  } finally {
    await engine.close();
  }
}

/**
 * Runs `q` over the mirror `database` (a SQLite file opened read-only, or a PostgreSQL URL); best first, by tier,
 * alike on both engines, the tier being the integer part of `rank`:
 * - 3: a production (series, event) whose title begins with the words, in order: the whole title or its start;
 * - 2: a production whose title holds them as a phrase further on (`cherry orchard`: "The Cherry Orchard");
 * - 1: any other record whose title (name, alt text) holds every word;
 * - 0: the rest, found by its description, caption or venue name.
 * Within tiers 3 to 1, the closer the title is to the words the better (the fraction: the share of the title they
 * make up, so an exact title comes first); within tier 0, text relevance (bm25 on SQLite, ts_rank_cd on
 * PostgreSQL). Case and accents aside, as the index reads words; a prefix word (`nutcr*`) counts in every tier.
 */
export const searchMirror = (database: string, q: SearchQuery): Promise<SearchHit[]> =>
  isPostgresUrl(database) ? searchPostgres(database, q) : Promise.resolve(searchSqlite(database, q));

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
