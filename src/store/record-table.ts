import { type Kysely, sql } from 'kysely';
import { UnderstudyError } from '../errors.js';
import type { UpstreamDoc } from '../vocabulary/ids.js';
import { TYPED_COLUMNS } from './columns.js';
import { collectionTable, type Database } from './db-schema.js';
import { docKey, extractColumn, normaliseInstant, rowUpdatedAt, type SqlValue } from './extract-row.js';
import type { PreparedStatements } from './prepared-statements.js';
import { PUBLISHED, type SyncKey, type UpsertCounts } from './store.js';

/** Kysely over tables whose columns are only known at run time (the typed columns of `TYPED_COLUMNS`). */
type LooseDatabase = Record<string, Record<string, SqlValue>>;

/**
 * Where the rows of one (tenant, collection, variant) live. Published rows sit in the collection's own table with
 * its typed columns, scoped by tenant; every other variant sits in `doc_variants`, scoped by collection, tenant and
 * variant. Nothing else differs, so every query below is written once over this layout.
 */
interface Layout {
  readonly table: string;
  /** The key's columns besides `id`, with this key's values, in binding order. */
  readonly scope: readonly (readonly [column: string, value: string])[];
  /** Columns only this table has, appended to a row from the record by `extra`. */
  readonly extraColumns: readonly string[];
  readonly extra: (doc: UpstreamDoc, row: SqlValue[]) => void;
}

const layoutFor = (key: SyncKey): Layout => {
  if (key.variant === PUBLISHED) {
    const typed = TYPED_COLUMNS[key.collection];
    return {
      table: collectionTable(key.collection),
      scope: [['tenant', key.tenant]],
      extraColumns: ['created_at', ...typed.map((t) => t.column)],
      extra: (doc, row) => {
        row.push(normaliseInstant(doc.createdAt));
        for (const t of typed) row.push(extractColumn(doc, t));
      },
    };
  }
  return {
    table: 'doc_variants',
    scope: [
      ['collection', key.collection],
      ['tenant', key.tenant],
      ['variant', key.variant],
    ],
    extraColumns: [],
    extra: () => undefined,
  };
};

/** The columns every record table has besides its key. */
const ROW_COLUMNS = ['updated_at', 'doc', 'deleted_at', 'seen_run', 'mirrored_at'] as const;

interface ExistingRow {
  updated_at: string | null;
  deleted_at: string | null;
  seen_run: string | null;
  /** Only fetched when `updated_at` is null: then the doc text decides whether the record changed. */
  undated_doc: string | null;
}

/** The per-record statements of one table, prepared once: their parameters are bound by position. */
interface RowStatements {
  /** Binds the key values, `id`, then `ROW_COLUMNS`, then the layout's extra columns. */
  readonly upsert: { run(...params: SqlValue[]): unknown };
  /** Binds the key values, then `id`. */
  readonly existing: { get(...params: SqlValue[]): unknown };
  /** Binds the seen run, the key values, then `id`: marks an unchanged row as seen by a full run. */
  readonly touch: { run(...params: SqlValue[]): unknown };
}

const isNewer = (incoming: string | null, stored: string | null): boolean | null => {
  if (incoming === null || stored === null) return null;
  const a = Date.parse(incoming);
  const b = Date.parse(stored);
  if (Number.isNaN(a) || Number.isNaN(b)) return incoming > stored;
  return a > b;
};

const MARKER = '\u0000';

type Where<Q> = { where(column: string, op: '=' | '>' | '>=' | '<=' | 'is', value: SqlValue): Q };

/** The record tables of one connection; the row statements of each table layout are prepared once and kept. */
export class RecordTables {
  private readonly rowStatements = new Map<string, RowStatements>();
  private readonly db: Kysely<LooseDatabase>;

  constructor(
    db: Kysely<Database>,
    private readonly stmts: PreparedStatements,
  ) {
    this.db = db as unknown as Kysely<LooseDatabase>;
  }

  /** The rows of `key`. */
  of(key: SyncKey): RecordTable {
    const layout = layoutFor(key);
    return new RecordTable(this.db, this.stmts, layout, key, this.statementsFor(layout));
  }

  clear(): void {
    this.rowStatements.clear();
  }

  private statementsFor(layout: Layout): RowStatements {
    const cacheKey = `${layout.table}\u0000${layout.scope.map(([c]) => c).join(',')}`;
    let s = this.rowStatements.get(cacheKey);
    if (!s) {
      s = this.prepareRowStatements(layout);
      this.rowStatements.set(cacheKey, s);
    }
    return s;
  }

  private prepareRowStatements(layout: Layout): RowStatements {
    const { table } = layout;
    const key = [...layout.scope.map(([c]) => c), 'id'];
    const byKey = <Q extends Where<Q>>(q: Q): Q => key.reduce((acc, c) => acc.where(c, '=', MARKER), q);
    const existing = this.stmts.prep(
      byKey(
        this.db
          .selectFrom(table)
          .select([
            'updated_at',
            'deleted_at',
            'seen_run',
            sql<string | null>`case when updated_at is null then doc end`.as('undated_doc'),
          ]),
      ).compile(),
    );
    const touch = this.stmts.prep(byKey(this.db.updateTable(table).set({ seen_run: MARKER })).compile());
    return {
      upsert: this.compileUpsert(table, [...key, ...ROW_COLUMNS, ...layout.extraColumns], key),
      existing,
      touch,
    };
  }

  /** Compiles an upsert whose parameters are exactly `columns` in order (checked with sentinel values). */
  private compileUpsert(table: string, columns: readonly string[], conflict: readonly string[]) {
    const sentinel = Object.fromEntries(columns.map((c) => [c, `\u0000${c}`]));
    const set = Object.fromEntries(
      columns
        .filter((c) => !conflict.includes(c))
        .map((c) => [
          c,
          // A write outside a full run must not erase which full run saw the row.
          c === 'seen_run'
            ? sql<SqlValue>`coalesce(excluded.seen_run, ${sql.ref(`${table}.seen_run`)})`
            : sql.ref<SqlValue>(`excluded.${c}`),
        ]),
    );
    const q = this.db
      .insertInto(table)
      .values(sentinel)
      .onConflict((oc) => oc.columns(conflict as string[]).doUpdateSet(set))
      .compile();
    const ok = q.parameters.length === columns.length && q.parameters.every((p, i) => p === sentinel[columns[i]!]);
    if (!ok)
      throw new UnderstudyError('US_STORE', `store: upsert for ${table} did not compile to one parameter per column`);
    return this.stmts.prep(q);
  }
}

/**
 * The rows of one (tenant, collection, variant): get, upsert and mark-seen a page, tombstone one or the unseen,
 * and read live rows. Every method runs synchronously inside the caller's transaction.
 */
export class RecordTable {
  constructor(
    private readonly db: Kysely<LooseDatabase>,
    private readonly stmts: PreparedStatements,
    private readonly layout: Layout,
    private readonly key: SyncKey,
    private readonly rowStatements: RowStatements,
  ) {}

  /** `q` narrowed to this key's live rows. */
  private live<Q extends Where<Q>>(q: Q): Q {
    return this.layout.scope.reduce((acc, [c, v]) => acc.where(c, '=', v), q).where('deleted_at', 'is', null);
  }

  /** Newer-wins upsert of a page of records; `seenRunId` marks every row of the page as seen by that full run. */
  upsertPage(docs: readonly UpstreamDoc[], seenRunId: string | null): UpsertCounts {
    const { collection } = this.key;
    const s = this.rowStatements;
    const scope = this.layout.scope.map(([, v]) => v);
    const now = new Date().toISOString();
    const row = (id: string, doc: UpstreamDoc, docText: string): SqlValue[] => {
      const out: SqlValue[] = [...scope, id, rowUpdatedAt(doc.updatedAt), docText, null, seenRunId, now];
      this.layout.extra(doc, out);
      return out;
    };
    const counts: UpsertCounts = { inserted: 0, updated: 0, unchanged: 0 };
    for (let i = 0; i < docs.length; i++) {
      const doc = docs[i]!;
      const id = docKey(collection, doc);
      if (id === null) {
        const what = collection === 'media' ? 'neither an id nor a filename' : 'no id';
        throw new UnderstudyError('US_STORE', `store: ${collection} record at index ${i} has ${what}`);
      }
      const docText = JSON.stringify(doc);
      const old = s.existing.get(...scope, id) as ExistingRow | undefined;
      if (old === undefined) {
        s.upsert.run(...row(id, doc, docText));
        counts.inserted++;
        continue;
      }
      const newer = isNewer(rowUpdatedAt(doc.updatedAt), old.updated_at);
      const changed = old.deleted_at !== null || (newer ?? old.undated_doc !== docText);
      if (changed) {
        s.upsert.run(...row(id, doc, docText));
        counts.updated++;
      } else {
        counts.unchanged++;
        if (seenRunId !== null && old.seen_run !== seenRunId) s.touch.run(seenRunId, ...scope, id);
      }
    }
    return counts;
  }

  /** Ids of live rows the full run `runId` has not seen. */
  unseenIds(runId: string): string[] {
    const unseen = sql<boolean>`(seen_run is null or seen_run <> ${runId})`;
    const q = this.live(this.db.selectFrom(this.layout.table).select('id')).where(unseen);
    return this.stmts.all(q.compile()).map((r) => r.id as string);
  }

  /** Marks deleted the live rows the full run `runId` has not seen, except `keep`; returns how many. */
  tombstoneUnseen(runId: string, keep: readonly string[], now: string): number {
    const kept = keep.length > 0 ? sql<boolean>`id not in (${sql.join(keep)})` : sql<boolean>`1 = 1`;
    const unseen = sql<boolean>`(seen_run is null or seen_run <> ${runId}) and ${kept}`;
    return this.stmts.run(
      this.live(this.db.updateTable(this.layout.table).set({ deleted_at: now }))
        .where(unseen)
        .compile(),
    );
  }

  /** Marks one live row deleted; returns whether there was one. */
  tombstone(id: string, now: string): boolean {
    const q = this.live(this.db.updateTable(this.layout.table).set({ deleted_at: now })).where('id', '=', id);
    return this.stmts.run(q.compile()) > 0;
  }

  /** How many live rows have `updated_at` between `from` and `to`, both included. */
  countUpdatedBetween(from: string, to: string): number {
    const q = this.live(this.db.selectFrom(this.layout.table).select(sql<number>`count(*)`.as('n')))
      .where('updated_at', '>=', from)
      .where('updated_at', '<=', to);
    return Number(this.stmts.all(q.compile())[0]?.n ?? 0);
  }

  /** Live rows after `afterId` in id order, at most `limit` (-1: all); with their doc text when `withDoc`. */
  liveChunk(afterId: string | null, limit: number, withDoc: boolean): { id: string; doc?: string }[] {
    let q = this.live(this.db.selectFrom(this.layout.table).select(withDoc ? ['id', 'doc'] : ['id']));
    if (afterId !== null) q = q.where('id', '>', afterId);
    return this.stmts.all(q.orderBy('id').limit(limit).compile()) as { id: string; doc?: string }[];
  }
}
