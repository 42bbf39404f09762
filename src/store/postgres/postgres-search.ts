import { type RawBuilder, sql } from 'kysely';
import {
  PRODUCTION,
  queryWords,
  type SearchHit,
  type SearchQuery,
  snippetOf,
  tokens,
  unaccented,
  type Word,
  wordsLength,
} from '../search-query.js';
import { connectPostgres } from './postgres-engine.js';

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

export async function searchPostgres(url: string, q: SearchQuery): Promise<SearchHit[]> {
  const words = queryWords(q.text);
  const all = words.map((w) => tsWord(w, '&')).reduce((a, b) => sql`(${a} && ${b})`);
  const engine = await connectPostgres(url, { maxConnections: 1, readOnly: true });
  try {
    const tenant = q.tenant ?? null;
    const collection = q.collection ?? null;
    const { rows } = await sql<Omit<SearchHit, 'snippet'> & { text: string }>`WITH best AS (
        SELECT d.doc_id, ${postgresRank(words, all)} AS rank
        FROM search_docs d
        WHERE d.tsv @@ ${all} AND (${tenant}::text IS NULL OR d.tenant = ${tenant})
          AND (${collection}::text IS NULL OR d.collection = ${collection})
        ORDER BY rank DESC, d.doc_id LIMIT ${q.limit})
      SELECT d.collection, d.tenant, d.id, d.title, concat_ws(' ', d.title, d.venue, d.body) AS text,
        best.rank::float8 AS rank
      FROM best JOIN search_docs d ON d.doc_id = best.doc_id
      ORDER BY best.rank DESC, d.doc_id`.execute(engine.db);
    // The snippet is cut here, not by ts_headline: that matches the query's accent-free lexemes against the text as
    // written, so an accented word (Coppélia, Montréal) went unmarked and could fall out of the snippet.
    return rows.map(({ text, rank, ...r }) => ({ ...r, snippet: snippetOf(text, words), rank: Number(rank) }));
  } finally {
    await engine.close();
  }
}
