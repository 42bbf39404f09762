import { CompiledQuery, type Kysely, type RawBuilder, sql } from 'kysely';
import { UnderstudyError } from '../errors.js';
import type { RowVersion, VersionRange } from '../sync/self-check.js';
import { type DeleteReason, type Position, PUBLISHED, type SyncKey } from '../sync/store-port.js';
import type { JsonValue, UpstreamDoc } from '../vocabulary/ids.js';
import { TYPED_COLUMNS } from './columns.js';
import { collectionTable, type Database } from './db-schema.js';
import type { StoreEngine } from './engine.js';
import { docKey, extractColumn, normaliseInstant, rowUpdatedAt, type SqlValue } from './extract-row.js';
import { storableDoc } from './storable-doc.js';

/** Kysely over tables whose columns are only known at run time (the typed columns of `TYPED_COLUMNS`). */
type LooseDatabase = Record<string, Record<string, SqlValue>>;
type Where<Q> = {
  where(
    column: string,
    op: '=' | '>' | '>=' | '<' | '<=' | 'is' | 'is not' | 'in',
    value: SqlValue | readonly string[],
  ): Q;
};

/**
 * Where the rows of one (tenant, collection, variant) live. Published rows sit in the collection's own table with
 * its typed columns, scoped by tenant; every other variant sits in `doc_variants`, scoped by collection, tenant and
 * variant. Nothing else differs, so every query below is written once over this layout.
 */
interface Layout {
  readonly table: string;
  /** The key's columns besides `id`, with this key's values, in binding order. */
  readonly scope: readonly (readonly [column: string, value: string])[];
  /** Columns only this table has, filled from the record by `extra`. */
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

/** The columns every record table has besides its key, in row order. */
const ROW_COLUMNS = [
  'updated_at',
  'doc',
  'deleted_at',
  'deleted_reason',
  'seen_run',
  'mirrored_at',
  'last_change',
  'change_source',
  'change_run',
] as const;

/** Who writes a row, copied into the change log by its triggers (`changes.source`, `changes.run_id`). */
export interface RowOrigin {
  readonly source: string;
  readonly runId: string | null;
}

/** An upsert compiled once per table and row count: where each parameter's value comes from. */
interface CompiledUpsert {
  readonly sql: string;
  /** Per parameter: [row, column index] of the row values, or -1 for the fetch time. */
  readonly slots: readonly (readonly [number, number] | -1)[];
  /** Whether the slots are every row's values in order, then the fetch time. */
  readonly rowMajor: boolean;
}

const FETCHED = '\u0000fetched';

/** The parameters of an upsert whose values are bound row after row, the fetch time last (the usual case). */
const rowMajor = (rows: readonly RowValues[], fetchedAt: string): SqlValue[] => {
  const out: SqlValue[] = [];
  for (const r of rows) for (const v of r.values) out.push(v);
  out.push(fetchedAt);
  return out;
};

/** The parameters of an upsert bound in any other order, slot by slot. */
const bySlot = (compiled: CompiledUpsert, rows: readonly RowValues[], fetchedAt: string): SqlValue[] =>
  compiled.slots.map((s) => (s === -1 ? fetchedAt : (rows[s[0]]?.values[s[1]] ?? null)));

/** A record's row values in column order, with its key. */
interface RowValues {
  readonly id: string;
  readonly values: SqlValue[];
}

/**
 * The record rows of one engine: set-based statements over a key's rows. Newer-wins lives in the upsert's
 * `ON CONFLICT … DO UPDATE … WHERE`, so two writers racing under READ COMMITTED cannot undo each other.
 */
export class RecordRows {
  private readonly upserts = new Map<string, CompiledUpsert>();
  private readonly db: Kysely<LooseDatabase>;

  constructor(private readonly engine: StoreEngine) {
    this.db = engine.db as unknown as Kysely<LooseDatabase>;
  }

  /**
   * Upserts `docs` (newer wins; a tombstone is undone only by a record fetched after the delete) and, with `seenBy`, marks every one of their rows seen by that full run. Returns the rows written, with
   * how ('insert' | 'update' | 'revive'), and how many records were not written.
   */
  async upsert(
    conn: Kysely<Database>,
    key: SyncKey,
    docs: readonly UpstreamDoc[],
    opts: {
      readonly fetchedAt: string;
      readonly now: string;
      readonly seenBy: string | null;
      readonly origin: RowOrigin;
    },
  ): Promise<{ written: { id: string; kind: string }[]; unchanged: number }> {
    const layout = layoutFor(key);
    const rows = this.rowsOf(key, layout, docs, opts);
    const width = layout.scope.length + 1 + ROW_COLUMNS.length + layout.extraColumns.length;
    const perStatement = Math.max(1, Math.floor(this.engine.maxParameters / (width + 1)));
    const written: { id: string; kind: string }[] = [];
    for (let i = 0; i < rows.length; i += perStatement) {
      const chunk = rows.slice(i, i + perStatement);
      const compiled = this.compiledUpsert(layout, chunk.length, width);
      const params = compiled.rowMajor ? rowMajor(chunk, opts.fetchedAt) : bySlot(compiled, chunk, opts.fetchedAt);
      const res = await conn.executeQuery<{ id: string; last_change: string }>(CompiledQuery.raw(compiled.sql, params));
      for (const r of res.rows) written.push({ id: String(r.id), kind: r.last_change });
    }
    if (opts.seenBy !== null && written.length < rows.length) {
      // Rows the upsert wrote carry `seenBy` already; only those it left alone need marking.
      const wrote = new Set(written.map((w) => w.id));
      await this.touch(
        conn,
        layout,
        rows.filter((r) => !wrote.has(r.id)),
        opts.seenBy,
      );
    }
    return { written, unchanged: rows.length - written.length };
  }

  /** Tombstones the live rows of `ids` as `reason` (default `deleted`); returns the ids marked. */
  async tombstone(
    conn: Kysely<Database>,
    key: SyncKey,
    ids: readonly string[],
    now: string,
    origin: RowOrigin,
    reason: DeleteReason = 'deleted',
  ): Promise<string[]> {
    const layout = layoutFor(key);
    const out: string[] = [];
    for (const chunk of this.idChunks(ids)) {
      const q = this.live(layout, this.markDeleted(layout, now, origin, reason))
        .where('id', 'in', chunk)
        .returning('id');
      out.push(...(await conn.executeQuery<{ id: unknown }>(q.compile())).rows.map((r) => String(r.id)));
    }
    return out;
  }

  /**
   * Tombstones the live rows of `key` that the full run `runId` did not see and that were last written before
   * `startedAt`: first those in `unpublished` (by chunks, so it may be of any length) as `unpublished`, then the
   * rest as `deleted`. Returns their ids, in that order.
   */
  async tombstoneUnseen(
    conn: Kysely<Database>,
    key: SyncKey,
    pass: { readonly runId: string; readonly startedAt: string; readonly unpublished: readonly string[] },
    now: string,
    origin: RowOrigin,
  ): Promise<string[]> {
    const layout = layoutFor(key);
    const out: string[] = [];
    const mark = (reason: DeleteReason) => this.markDeleted(layout, now, origin, reason);
    for (const chunk of this.idChunks(pass.unpublished)) {
      const q = this.unseen(layout, mark('unpublished'), pass.runId, pass.startedAt)
        .where('id', 'in', chunk)
        .returning('id');
      out.push(...(await conn.executeQuery<{ id: unknown }>(q.compile())).rows.map((r) => String(r.id)));
    }
    const q = this.unseen(layout, mark('deleted'), pass.runId, pass.startedAt).returning('id');
    out.push(...(await conn.executeQuery<{ id: unknown }>(q.compile())).rows.map((r) => String(r.id)));
    return out;
  }

  /** Ids of live rows the full run `runId` has not seen among those written before `startedAt`. */
  async unseenIds(conn: Kysely<Database>, key: SyncKey, runId: string, startedAt: string): Promise<string[]> {
    const layout = layoutFor(key);
    const q = this.unseen(layout, this.db.selectFrom(layout.table).select('id'), runId, startedAt).orderBy('id');
    return (await conn.executeQuery<{ id: unknown }>(q.compile())).rows.map((r) => String(r.id));
  }

  /** How many live rows have `updated_at` between `from` and `to`, both included. */
  async countUpdatedBetween(conn: Kysely<Database>, key: SyncKey, from: string, to: string): Promise<number> {
    const layout = layoutFor(key);
    const q = this.live(layout, this.db.selectFrom(layout.table).select(sql<number>`count(*)`.as('n')))
      .where('updated_at', '>=', from)
      .where('updated_at', '<=', to);
    const [r] = (await conn.executeQuery<{ n: number | string }>(q.compile())).rows;
    return Number(r?.n ?? 0);
  }

  /** How many live rows a key has. */
  async countLive(conn: Kysely<Database>, key: SyncKey): Promise<number> {
    const layout = layoutFor(key);
    const q = this.live(layout, this.db.selectFrom(layout.table).select(sql<number>`count(*)`.as('n')));
    const [r] = (await conn.executeQuery<{ n: number | string }>(q.compile())).rows;
    return Number(r?.n ?? 0);
  }

  /** Ids and `updated_at` of live rows with `updated_at` between `from` and `to`, both included, in id order. */
  async versionsUpdatedBetween(conn: Kysely<Database>, key: SyncKey, from: string, to: string): Promise<Position[]> {
    const layout = layoutFor(key);
    const q = this.live(layout, this.db.selectFrom(layout.table).select(['id', 'updated_at']))
      .where('updated_at', '>=', from)
      .where('updated_at', '<=', to)
      .orderBy('id');
    const rows = (await conn.executeQuery<{ id: unknown; updated_at: string }>(q.compile())).rows;
    return rows.map((r) => ({ id: String(r.id), updatedAt: r.updated_at }));
  }

  /**
   * The id and `updated_at` of the live rows of `key` in `range` (the self-check's comparison): a dated range reads
   * the `(tenant, updated_at, id)` index; `updated_at` text compares as an instant (normalised to UTC with ms).
   */
  async liveVersions(conn: Kysely<Database>, key: SyncKey, range: VersionRange): Promise<RowVersion[]> {
    const layout = layoutFor(key);
    const live = () => this.live(layout, this.db.selectFrom(layout.table).select(['id', 'updated_at']));
    const dated = (r: { readonly from: string | null; readonly before: string | null }) => {
      let q = live().where('updated_at', 'is not', null);
      if (r.from !== null) q = q.where('updated_at', '>=', r.from);
      if (r.before !== null) q = q.where('updated_at', '<', r.before);
      return q;
    };
    const queries =
      'ids' in range
        ? this.idChunks(range.ids).map((chunk) => live().where('id', 'in', chunk))
        : 'undated' in range
          ? [live().where('updated_at', 'is', null)]
          : [dated(range)];
    const out: RowVersion[] = [];
    for (const q of queries) {
      const rows = (await conn.executeQuery<{ id: unknown; updated_at: string | null }>(q.compile())).rows;
      for (const r of rows) out.push({ id: String(r.id), updatedAt: r.updated_at });
    }
    return out;
  }

  /** Live rows after `afterId` in id order, at most `limit` (-1: all), with their doc text when `withDoc`. */
  async liveChunk(
    conn: Kysely<Database>,
    key: SyncKey,
    afterId: string | null,
    limit: number,
    withDoc: boolean,
  ): Promise<{ id: string; doc?: string }[]> {
    const layout = layoutFor(key);
    let q = this.live(layout, this.db.selectFrom(layout.table).select(withDoc ? ['id', 'doc'] : ['id']));
    if (afterId !== null) q = q.where('id', '>', afterId);
    q = q.orderBy('id');
    if (limit >= 0) q = q.limit(limit);
    const rows = (await conn.executeQuery<{ id: unknown; doc?: string }>(q.compile())).rows;
    return rows.map((r) => ({ id: String(r.id), ...(withDoc ? { doc: r.doc as string } : {}) }));
  }

  /** The row values of `docs`, one per id (the last of duplicates: a page names a record once). */
  private rowsOf(
    key: SyncKey,
    layout: Layout,
    docs: readonly UpstreamDoc[],
    opts: { readonly now: string; readonly seenBy: string | null; readonly origin: RowOrigin },
  ): RowValues[] {
    const scope = layout.scope.map(([, v]) => v);
    const byId = new Map<string, RowValues>();
    for (let i = 0; i < docs.length; i++) {
      const { doc, text } = storableDoc(docs[i]!);
      const id = docKey(key.collection, doc);
      if (id === null) {
        const what = key.collection === 'media' ? 'neither an id nor a filename' : 'no id';
        throw new UnderstudyError('US_STORE', `store: ${key.collection} record at index ${i} has ${what}`);
      }
      const values: SqlValue[] = [...scope, id];
      // deleted_at and deleted_reason NULL: a record written is live (a revive clears both).
      values.push(rowUpdatedAt(doc.updatedAt as JsonValue | undefined), text, null, null, opts.seenBy);
      values.push(opts.now, 'insert', opts.origin.source, opts.origin.runId);
      layout.extra(doc, values);
      byId.delete(id);
      byId.set(id, { id, values });
    }
    // In id order: every writer locks a page's rows in the same order, so two never deadlock on PostgreSQL.
    return [...byId.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /** Marks `rows` seen by the full run `runId` where they are not already. */
  private async touch(
    conn: Kysely<Database>,
    layout: Layout,
    rows: readonly RowValues[],
    runId: string,
  ): Promise<void> {
    for (const chunk of this.idChunks(rows.map((r) => r.id))) {
      const q = this.scoped(layout, this.db.updateTable(layout.table).set({ seen_run: runId }))
        .where('id', 'in', chunk)
        .where(sql<boolean>`(seen_run is null or seen_run <> ${runId})`);
      await conn.executeQuery(q.compile());
    }
  }

  private idChunks(ids: readonly string[]): string[][] {
    const size = Math.min(1000, this.engine.maxParameters - 16);
    const out: string[][] = [];
    for (let i = 0; i < ids.length; i += size) out.push(ids.slice(i, i + size));
    return out;
  }

  private scoped<Q extends Where<Q>>(layout: Layout, q: Q): Q {
    return layout.scope.reduce((acc, [c, v]) => acc.where(c, '=', v), q);
  }

  private live<Q extends Where<Q>>(layout: Layout, q: Q): Q {
    return this.scoped(layout, q).where('deleted_at', 'is', null);
  }

  /** `q` narrowed to live rows neither seen by `runId` nor written since `startedAt`. */
  private unseen<Q extends Where<Q> & { where(e: RawBuilder<boolean>): Q }>(
    layout: Layout,
    q: Q,
    runId: string,
    startedAt: string,
  ): Q {
    return this.live(layout, q)
      .where(sql<boolean>`(seen_run is null or seen_run <> ${runId})`)
      .where(sql<boolean>`mirrored_at < ${startedAt}`);
  }

  private markDeleted(layout: Layout, now: string, origin: RowOrigin, reason: DeleteReason) {
    return this.db.updateTable(layout.table).set({
      deleted_at: now,
      deleted_reason: reason,
      mirrored_at: now,
      last_change: 'delete',
      change_source: origin.source,
      change_run: origin.runId,
    });
  }

  /**
   * The multi-row upsert of `n` rows of `layout`, compiled once by Kysely with a sentinel per value and kept: its
   * parameters are then bound by position from each page's rows.
   */
  private compiledUpsert(layout: Layout, n: number, width: number): CompiledUpsert {
    const cacheKey = `${layout.table}\u0000${layout.scope.length}\u0000${n}`;
    const hit = this.upserts.get(cacheKey);
    if (hit) return hit;
    const columns = [...layout.scope.map(([c]) => c), 'id', ...ROW_COLUMNS, ...layout.extraColumns];
    const conflict = [...layout.scope.map(([c]) => c), 'id'];
    const sentinel = (r: number, c: number) => `\u0000${r}\u0000${c}`;
    const values = Array.from({ length: n }, (_, r) => Object.fromEntries(columns.map((c, i) => [c, sentinel(r, i)])));
    const t = (c: string) => sql.ref(`${layout.table}.${c}`);
    const ex = (c: string) => sql.ref(`excluded.${c}`);
    const set: Record<string, unknown> = {};
    for (const c of columns) {
      if (conflict.includes(c)) continue;
      if (c === 'seen_run') set[c] = sql`coalesce(${ex('seen_run')}, ${t('seen_run')})`;
      else if (c === 'last_change') set[c] = sql`case when ${t('deleted_at')} is null then 'update' else 'revive' end`;
      else set[c] = ex(c);
    }
    // Newer wins over a live row: by instant when both sides are dated, by content when either is not. A tombstone
    // gives way only to a record fetched after it was set (the record exists again upstream): a page fetched before
    // it predates the delete, however new its record's updatedAt.
    const newer = sql<boolean>`case when ${t('deleted_at')} is not null then ${FETCHED} > ${t('deleted_at')}
      when ${ex('updated_at')} is null or ${t('updated_at')} is null then ${ex('doc')} is distinct from ${t('doc')}
      else ${ex('updated_at')} > ${t('updated_at')} end`;
    const q = this.db
      .insertInto(layout.table)
      .values(values as Record<string, SqlValue>[])
      .onConflict((oc) =>
        oc
          .columns(conflict as never)
          .doUpdateSet(set as never)
          .where(newer as never),
      )
      .returning(['id', 'last_change'])
      .compile();
    const slots = q.parameters.map((p): readonly [number, number] | -1 => {
      if (p === FETCHED) return -1;
      const [, r, c] = String(p).split('\u0000');
      return [Number(r), Number(c)];
    });
    if (slots.length !== n * width + 1) throw new Error(`store: the upsert for ${layout.table} did not compile`);
    const rowMajorOrder = slots.every((s, i) =>
      i === slots.length - 1 ? s === -1 : s !== -1 && s[0] === Math.floor(i / width) && s[1] === i % width,
    );
    const compiled = { sql: q.sql, slots, rowMajor: rowMajorOrder };
    this.upserts.set(cacheKey, compiled);
    return compiled;
  }
}
