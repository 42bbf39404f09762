import { type Kysely, sql } from 'kysely';
import { inTransaction, isPostgres } from './lib/engine.js';

type Engine = 'sqlite' | 'postgres';
// biome-ignore lint/suspicious/noExplicitAny: migrations take Kysely<any> so they stay frozen in time
const engineOf = (db: Kysely<any>): Engine => (isPostgres(db) ? 'postgres' : 'sqlite');

/**
 * Full-text search over the mirror, kept in step by triggers on the collection tables, so every write path (sync,
 * write-through, any future upsert) updates it in the same transaction as the row, on insert, update, revive,
 * tombstone and delete alike.
 *
 * `search_docs` holds one row per live searchable record: its title, body (description) and venue name (the
 * event's live venue, or a venue's city). On SQLite, `search_fts` is an FTS5 index over it (external content,
 * bm25 weights title 10, body 1, venue 4, accents ignored); on PostgreSQL, `search_docs.tsv` is a generated tsvector
 * (weights A, D, B; accents stripped in a UTF8 database) with a GIN index. Frozen as of this migration: a later change of what is indexed is a new migration.
 */

type Expr = (r: string) => string;
interface Source {
  readonly table: string;
  /** Collection slug as in the API path, stored in `search_docs.collection`. */
  readonly collection: string;
  readonly title: Expr;
  /** The record field whose string value is the body. */
  readonly bodyField: string;
  readonly venue: (engine: Engine) => Expr;
  /** Columns whose change re-indexes the row (besides `doc` and `deleted_at`). */
  readonly columns: readonly string[];
}

const col =
  (c: string): Expr =>
  (r) =>
    `${r}.${c}`;
const none = () => () => 'NULL';
const liveVenueTitle = () => (r: string) =>
  `(SELECT v.title FROM venues v WHERE v.tenant = ${r}.tenant AND v.id = ${r}.venue_id AND v.deleted_at IS NULL)`;
const titled = (table: string, collection = table): Source => ({
  table,
  collection,
  title: col('title'),
  bodyField: 'description',
  venue: none,
  columns: ['title'],
});

const SOURCES: readonly Source[] = [
  titled('pages'),
  titled('posts'),
  titled('blogs'),
  titled('seasons'),
  titled('series'),
  { ...titled('events'), venue: liveVenueTitle, columns: ['title', 'venue_id'] },
  { ...titled('venues'), venue: () => col('city'), columns: ['title', 'city'] },
  { ...titled('organizations'), title: col('name'), columns: ['name'] },
  {
    ...titled('media'),
    title: (r) => `coalesce(${r}.alt, ${r}.filename)`,
    bodyField: 'caption',
    columns: ['alt', 'filename'],
  },
  titled('forms'),
];

/** The string value of a top-level field of `doc`, else NULL (a localised object or rich text is not a body). */
const BODY: Record<Engine, (r: string, field: string) => string> = {
  sqlite: (r, f) => `CASE json_type(${r}.doc, '$.${f}') WHEN 'text' THEN json_extract(${r}.doc, '$.${f}') END`,
  postgres: (r, f) => `CASE jsonb_typeof(${r}.doc::jsonb -> '${f}') WHEN 'string' THEN ${r}.doc::jsonb ->> '${f}' END`,
};
const DISTINCT: Record<Engine, string> = { sqlite: 'IS NOT', postgres: 'IS DISTINCT FROM' };

/** Insert-or-update of the search rows of row alias `r` (`from` names its table unless `r` is a trigger's row). */
const upsertFrom = (engine: Engine, s: Source, r: string, from: string, where: string): string => {
  const changed = ['title', 'body', 'venue'].map((c) => `search_docs.${c} ${DISTINCT[engine]} excluded.${c}`);
  return `INSERT INTO search_docs (collection, tenant, id, title, body, venue)
SELECT '${s.collection}', ${r}.tenant, ${r}.id, ${s.title(r)}, ${BODY[engine](r, s.bodyField)}, ${s.venue(engine)(r)}${from}
WHERE ${where}
ON CONFLICT (collection, tenant, id) DO UPDATE SET title = excluded.title, body = excluded.body, venue = excluded.venue
WHERE ${changed.join(' OR ')}`;
};
const deleteOld = (s: Source, r = 'old') =>
  `DELETE FROM search_docs WHERE collection = '${s.collection}' AND tenant = ${r}.tenant AND id = ${r}.id`;

/**
 * Events carry their venue's name: a venue written, renamed, tombstoned, revived or deleted updates the search rows
 * of the live events at it. `title` is the venue's new title, or NULL when it is gone.
 */
const venueNames = (engine: Engine, r: string, title: string) => `UPDATE search_docs SET venue = ${title}
WHERE collection = 'events' AND tenant = ${r}.tenant AND venue ${DISTINCT[engine]} ${title}
  AND id IN (SELECT e.id FROM events e WHERE e.tenant = ${r}.tenant AND e.venue_id = ${r}.id AND e.deleted_at IS NULL)`;

function sqliteStatements(): string[] {
  const out = [
    `CREATE TABLE search_docs (doc_id INTEGER PRIMARY KEY, collection TEXT NOT NULL, tenant TEXT NOT NULL,
  id TEXT NOT NULL, title TEXT, body TEXT, venue TEXT, UNIQUE (collection, tenant, id))`,
    `CREATE VIRTUAL TABLE search_fts USING fts5(title, body, venue, content = 'search_docs', content_rowid = 'doc_id',
  tokenize = 'unicode61 remove_diacritics 2')`,
    // ORDER BY rank then means weighted bm25 for every query, ours or a user's.
    `INSERT INTO search_fts (search_fts, rank) VALUES ('rank', 'bm25(10.0, 1.0, 4.0)')`,
    `CREATE TRIGGER search_docs_insert AFTER INSERT ON search_docs BEGIN
  INSERT INTO search_fts (rowid, title, body, venue) VALUES (new.doc_id, new.title, new.body, new.venue); END`,
    `CREATE TRIGGER search_docs_delete AFTER DELETE ON search_docs BEGIN
  INSERT INTO search_fts (search_fts, rowid, title, body, venue) VALUES ('delete', old.doc_id, old.title, old.body, old.venue); END`,
    `CREATE TRIGGER search_docs_update AFTER UPDATE ON search_docs BEGIN
  INSERT INTO search_fts (search_fts, rowid, title, body, venue) VALUES ('delete', old.doc_id, old.title, old.body, old.venue);
  INSERT INTO search_fts (rowid, title, body, venue) VALUES (new.doc_id, new.title, new.body, new.venue); END`,
  ];
  for (const s of SOURCES) {
    const cols = ['doc', 'deleted_at', ...s.columns].join(', ');
    out.push(
      `CREATE TRIGGER ${s.table}_search_insert AFTER INSERT ON ${s.table} BEGIN
${upsertFrom('sqlite', s, 'new', '', 'new.deleted_at IS NULL')}; END`,
      `CREATE TRIGGER ${s.table}_search_update AFTER UPDATE OF ${cols}, tenant, id ON ${s.table} BEGIN
${deleteOld(s)} AND (new.deleted_at IS NOT NULL OR new.tenant IS NOT old.tenant OR new.id IS NOT old.id);
${upsertFrom('sqlite', s, 'new', '', 'new.deleted_at IS NULL')}; END`,
      `CREATE TRIGGER ${s.table}_search_delete AFTER DELETE ON ${s.table} BEGIN ${deleteOld(s)}; END`,
    );
  }
  const liveTitle = 'CASE WHEN new.deleted_at IS NULL THEN new.title END';
  out.push(
    `CREATE TRIGGER venues_search_names_insert AFTER INSERT ON venues BEGIN ${venueNames('sqlite', 'new', liveTitle)}; END`,
    `CREATE TRIGGER venues_search_names_update AFTER UPDATE OF title, deleted_at ON venues BEGIN
${venueNames('sqlite', 'new', liveTitle)}; END`,
    `CREATE TRIGGER venues_search_names_delete AFTER DELETE ON venues BEGIN ${venueNames('sqlite', 'old', 'NULL')}; END`,
  );
  return out;
}

/**
 * Text as indexed on PostgreSQL: without accents (decomposed, combining marks dropped), as SQLite's
 * `remove_diacritics` does, so `montreal` finds `Montréal` on both. `normalize` needs a UTF8 database.
 */
const bare = (utf8: boolean) => (col: string) =>
  utf8 ? `regexp_replace(normalize(coalesce(${col}, ''), NFD), '[\\u0300-\\u036f]', '', 'g')` : `coalesce(${col}, '')`;

function postgresStatements(utf8: boolean): string[] {
  const text = bare(utf8);
  const out = [
    `CREATE TABLE search_docs (doc_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, collection text NOT NULL,
  tenant text NOT NULL, id text NOT NULL, title text, body text, venue text,
  tsv tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('simple', ${text('title')}), 'A') ||
    setweight(to_tsvector('simple', ${text('venue')}), 'B') ||
    setweight(to_tsvector('simple', ${text('body')}), 'D')) STORED,
  CONSTRAINT search_docs_key UNIQUE (collection, tenant, id))`,
    `CREATE INDEX search_docs_tsv ON search_docs USING gin (tsv)`,
  ];
  for (const s of SOURCES) {
    // A trigger function per table: plpgsql's NEW/OLD are NULL where the operation has none, so branch on TG_OP.
    out.push(
      `CREATE FUNCTION ${s.table}_search() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  IF TG_OP = 'DELETE' THEN
    ${deleteOld(s, 'OLD')};
    RETURN NULL;
  END IF;
  IF TG_OP = 'UPDATE' THEN
    IF NEW.deleted_at IS NOT NULL OR NEW.tenant IS DISTINCT FROM OLD.tenant OR NEW.id IS DISTINCT FROM OLD.id THEN
      ${deleteOld(s, 'OLD')};
    END IF;
  END IF;
  IF NEW.deleted_at IS NULL THEN
    ${upsertFrom('postgres', s, 'NEW', '', 'true')};
  END IF;
  RETURN NULL;
END
$fn$`,
      `CREATE TRIGGER ${s.table}_search AFTER INSERT OR DELETE OR UPDATE OF ${['doc', 'deleted_at', 'tenant', 'id', ...s.columns].join(', ')}
  ON ${s.table} FOR EACH ROW EXECUTE FUNCTION ${s.table}_search()`,
    );
  }
  out.push(
    `CREATE FUNCTION venues_search_names() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  IF TG_OP = 'DELETE' THEN
    ${venueNames('postgres', 'OLD', 'NULL::text')};
  ELSE
    ${venueNames('postgres', 'NEW', 'CASE WHEN NEW.deleted_at IS NULL THEN NEW.title END')};
  END IF;
  RETURN NULL;
END
$fn$`,
    `CREATE TRIGGER venues_search_names AFTER INSERT OR DELETE OR UPDATE OF title, deleted_at ON venues
  FOR EACH ROW EXECUTE FUNCTION venues_search_names()`,
  );
  return out;
}

/** Indexes every live record already mirrored. */
const backfill = (engine: Engine): string[] =>
  SOURCES.map((s) => upsertFrom(engine, s, 'r', ` FROM ${s.table} r`, 'r.deleted_at IS NULL'));

// biome-ignore lint/suspicious/noExplicitAny: migrations take Kysely<any> so they stay frozen in time
export async function up(db: Kysely<any>): Promise<void> {
  const engine = engineOf(db);
  const utf8 =
    engine === 'postgres' &&
    (await sql<{ e: string }>`SELECT current_setting('server_encoding') AS e`.execute(db)).rows[0]?.e === 'UTF8';
  const statements = [...(engine === 'sqlite' ? sqliteStatements() : postgresStatements(utf8)), ...backfill(engine)];
  await inTransaction(db, async (trx) => {
    for (const s of statements) await sql.raw(s).execute(trx);
  });
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  const engine = engineOf(db);
  await inTransaction(db, async (trx) => {
    if (engine === 'sqlite') {
      const triggers = ['insert', 'update', 'delete'].flatMap((op) => [
        ...SOURCES.map((s) => `${s.table}_search_${op}`),
        `venues_search_names_${op}`,
      ]);
      for (const t of triggers) await sql.raw(`DROP TRIGGER IF EXISTS ${t}`).execute(trx);
      await sql.raw('DROP TABLE IF EXISTS search_fts').execute(trx);
    } else {
      for (const s of SOURCES) await sql.raw(`DROP TRIGGER IF EXISTS ${s.table}_search ON ${s.table}`).execute(trx);
      await sql.raw('DROP TRIGGER IF EXISTS venues_search_names ON venues').execute(trx);
      for (const f of [...SOURCES.map((s) => `${s.table}_search`), 'venues_search_names'])
        await sql.raw(`DROP FUNCTION IF EXISTS ${f}()`).execute(trx);
    }
    await sql.raw('DROP TABLE IF EXISTS search_docs').execute(trx);
  });
}
