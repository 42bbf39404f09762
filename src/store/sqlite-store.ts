import type BetterSqlite3 from 'better-sqlite3';
import { type CompiledQuery, type Kysely, sql } from 'kysely';
import { UnderstudyError } from '../errors.js';
import { COLLECTIONS, type CollectionSlug } from '../vocabulary/collections.js';
import type { TenantSlug, UpstreamDoc } from '../vocabulary/ids.js';
import { TYPED_COLUMNS } from './columns.js';
import { collectionTable, type Database, type SyncStateTable } from './db-schema.js';
import { docKey, extractColumn, normaliseInstant, rowUpdatedAt, type SqlValue } from './extract-row.js';
import { migrateToLatest } from './migrate.js';
import { openDatabase } from './open-database.js';
import {
  type MirrorStatus,
  PUBLISHED,
  type Store,
  type SyncKey,
  type SyncRunRow,
  type SyncState,
  type UpsertCounts,
} from './store.js';

/** Kysely over tables whose columns are only known at run time (the typed columns of `TYPED_COLUMNS`). */
type LooseDatabase = Record<string, Record<string, SqlValue>>;

const BASE_COLUMNS = ['tenant', 'id', 'updated_at', 'created_at', 'doc', 'deleted_at', 'seen_run', 'mirrored_at'];
const VARIANT_COLUMNS = [
  'collection',
  'tenant',
  'id',
  'variant',
  'updated_at',
  'doc',
  'deleted_at',
  'seen_run',
  'mirrored_at',
];
const SCAN_CHUNK = 500;

const BLANK_STATE: SyncState = { cursor: null, full: null, incremental: null, lastSuccessAt: null, lastError: null };

interface ExistingRow {
  updated_at: string | null;
  deleted_at: string | null;
  seen_run: string | null;
  /** Only fetched when `updated_at` is null: then the doc text decides whether the record changed. */
  undated_doc: string | null;
}

/** How one page of records is written: the statements prepared once per table and the row layout they bind. */
interface Writer {
  /** Binds one record's parameters, in the upsert statement's column order. */
  row(key: SyncKey, id: string, doc: UpstreamDoc, docText: string, seenRun: string | null, now: string): SqlValue[];
  readonly upsert: BetterSqlite3.Statement;
  readonly existing: BetterSqlite3.Statement;
  /** (seenRun, tenant, id[, variant]) — marks an unchanged row as seen by a full run. */
  readonly touch: BetterSqlite3.Statement;
  readonly existingParams: (key: SyncKey, id: string) => SqlValue[];
}

const isNewer = (incoming: string | null, stored: string | null): boolean | null => {
  if (incoming === null || stored === null) return null;
  const a = Date.parse(incoming);
  const b = Date.parse(stored);
  if (Number.isNaN(a) || Number.isNaN(b)) return incoming > stored;
  return a > b;
};

const storeError = (what: string, err: unknown): UnderstudyError =>
  err instanceof UnderstudyError
    ? err
    : new UnderstudyError('US_STORE', `store: ${what} failed: ${(err as Error)?.message ?? String(err)}`, {
        cause: err,
      });

/**
 * The mirror in one SQLite file. Queries are built with Kysely (portable SQL), compiled once, and run as
 * prepared better-sqlite3 statements inside `raw.transaction`: every method is synchronous underneath, so no two
 * transactions ever interleave on the one connection.
 */
export class SqliteStore implements Store {
  private readonly stmts = new Map<string, BetterSqlite3.Statement>();
  private readonly writers = new Map<string, Writer>();
  private closing: Promise<void> | undefined;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly raw: BetterSqlite3.Database,
  ) {}

  private get loose(): Kysely<LooseDatabase> {
    return this.db as unknown as Kysely<LooseDatabase>;
  }

  private prep(q: CompiledQuery): BetterSqlite3.Statement {
    let s = this.stmts.get(q.sql);
    if (!s) {
      s = this.raw.prepare(q.sql);
      this.stmts.set(q.sql, s);
    }
    return s;
  }

  private run(q: CompiledQuery): number {
    return this.prep(q).run(...(q.parameters as SqlValue[])).changes;
  }

  private all<R>(q: CompiledQuery<R>): R[] {
    return this.prep(q).all(...(q.parameters as SqlValue[])) as R[];
  }

  /** Compiles an upsert whose parameters are exactly `columns` in order (checked with sentinel values). */
  private compileUpsert(
    table: string,
    columns: readonly string[],
    conflict: readonly string[],
  ): BetterSqlite3.Statement {
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
    const q = this.loose
      .insertInto(table)
      .values(sentinel)
      .onConflict((oc) => oc.columns(conflict as string[]).doUpdateSet(set))
      .compile();
    const ok = q.parameters.length === columns.length && q.parameters.every((p, i) => p === sentinel[columns[i]!]);
    if (!ok)
      throw new UnderstudyError('US_STORE', `store: upsert for ${table} did not compile to one parameter per column`);
    return this.raw.prepare(q.sql);
  }

  private writer(key: SyncKey): Writer {
    const published = key.variant === PUBLISHED;
    const cacheKey = published ? key.collection : `variant:${key.collection}`;
    const cached = this.writers.get(cacheKey);
    if (cached) return cached;
    const marker = '\u0000';
    let w: Writer;
    if (published) {
      const table = collectionTable(key.collection);
      const typed = TYPED_COLUMNS[key.collection];
      const upsert = this.compileUpsert(table, [...BASE_COLUMNS, ...typed.map((t) => t.column)], ['tenant', 'id']);
      const existing = this.prep(
        this.db
          .selectFrom(table)
          .select([
            'updated_at',
            'deleted_at',
            'seen_run',
            sql<string | null>`case when updated_at is null then doc end`.as('undated_doc'),
          ])
          .where('tenant', '=', marker)
          .where('id', '=', marker)
          .compile(),
      );
      const touch = this.prep(
        this.db
          .updateTable(table)
          .set({ seen_run: marker })
          .where('tenant', '=', marker)
          .where('id', '=', marker)
          .compile(),
      );
      w = {
        upsert,
        existing,
        touch,
        existingParams: (k, id) => [k.tenant, id],
        row: (k, id, doc, docText, seenRun, now) => {
          const out: SqlValue[] = [
            k.tenant,
            id,
            rowUpdatedAt(doc.updatedAt),
            normaliseInstant(doc.createdAt),
            docText,
            null,
            seenRun,
            now,
          ];
          for (const t of typed) out.push(extractColumn(doc, t));
          return out;
        },
      };
    } else {
      const upsert = this.compileUpsert('doc_variants', VARIANT_COLUMNS, ['collection', 'tenant', 'id', 'variant']);
      const where = <Q extends { where: (c: 'collection' | 'tenant' | 'id' | 'variant', op: '=', v: string) => Q }>(
        q: Q,
      ): Q =>
        q
          .where('tenant', '=', marker)
          .where('id', '=', marker)
          .where('collection', '=', marker)
          .where('variant', '=', marker);
      const existing = this.prep(
        where(
          this.db
            .selectFrom('doc_variants')
            .select([
              'updated_at',
              'deleted_at',
              'seen_run',
              sql<string | null>`case when updated_at is null then doc end`.as('undated_doc'),
            ]),
        ).compile(),
      );
      const touch = this.prep(where(this.db.updateTable('doc_variants').set({ seen_run: marker })).compile());
      w = {
        upsert,
        existing,
        touch,
        existingParams: (k, id) => [k.tenant, id, k.collection, k.variant],
        row: (k, id, doc, docText, seenRun, now) => [
          k.collection,
          k.tenant,
          id,
          k.variant,
          rowUpdatedAt(doc.updatedAt),
          docText,
          null,
          seenRun,
          now,
        ],
      };
    }
    this.writers.set(cacheKey, w);
    return w;
  }

  /** Newer-wins upsert of a page of records, inside the caller's transaction. */
  private upsertPage(key: SyncKey, docs: readonly UpstreamDoc[], seenRunId: string | null): UpsertCounts {
    const w = this.writer(key);
    const now = new Date().toISOString();
    const counts: UpsertCounts = { inserted: 0, updated: 0, unchanged: 0 };
    for (let i = 0; i < docs.length; i++) {
      const doc = docs[i]!;
      const id = docKey(key.collection, doc);
      if (id === null) {
        const what = key.collection === 'media' ? 'neither an id nor a filename' : 'no id';
        throw new UnderstudyError('US_STORE', `store: ${key.collection} record at index ${i} has ${what}`);
      }
      const docText = JSON.stringify(doc);
      const old = w.existing.get(...w.existingParams(key, id)) as ExistingRow | undefined;
      if (old === undefined) {
        w.upsert.run(...w.row(key, id, doc, docText, seenRunId, now));
        counts.inserted++;
        continue;
      }
      const newer = isNewer(rowUpdatedAt(doc.updatedAt), old.updated_at);
      const changed = old.deleted_at !== null || (newer ?? old.undated_doc !== docText);
      if (changed) {
        w.upsert.run(...w.row(key, id, doc, docText, seenRunId, now));
        counts.updated++;
      } else {
        counts.unchanged++;
        if (seenRunId !== null && old.seen_run !== seenRunId) w.touch.run(seenRunId, ...w.existingParams(key, id));
      }
    }
    return counts;
  }

  private saveState(key: SyncKey, s: SyncState): void {
    const row: SyncStateTable = {
      tenant: key.tenant,
      collection: key.collection,
      variant: key.variant,
      cursor_updated_at: s.cursor?.updatedAt ?? null,
      cursor_id: s.cursor?.id ?? null,
      full_run_id: s.full?.runId ?? null,
      full_after_updated_at: s.full?.after?.updatedAt ?? null,
      full_after_id: s.full?.after?.id ?? null,
      incr_active: s.incremental ? 1 : 0,
      incr_after_updated_at: s.incremental?.after?.updatedAt ?? null,
      incr_after_id: s.incremental?.after?.id ?? null,
      last_success_at: s.lastSuccessAt,
      last_error: s.lastError,
    };
    const { tenant: _t, collection: _c, variant: _v, ...rest } = row;
    this.run(
      this.db
        .insertInto('sync_state')
        .values(row)
        .onConflict((oc) => oc.columns(['tenant', 'collection', 'variant']).doUpdateSet(rest))
        .compile(),
    );
  }

  private tx<T>(what: string, fn: () => T): Promise<T> {
    try {
      // BEGIN IMMEDIATE: with several processes on one file (workers), a deferred transaction that reads and then
      // writes fails at once with SQLITE_BUSY when another process wrote in between; IMMEDIATE waits (busy_timeout).
      return Promise.resolve(this.raw.transaction(fn).immediate());
    } catch (err) {
      return Promise.reject(storeError(what, err));
    }
  }

  async getSyncState(key: SyncKey): Promise<SyncState> {
    return this.tx('getSyncState', () => {
      const [r] = this.all(
        this.db
          .selectFrom('sync_state')
          .selectAll()
          .where('tenant', '=', key.tenant)
          .where('collection', '=', key.collection)
          .where('variant', '=', key.variant)
          .compile(),
      );
      if (!r) return BLANK_STATE;
      const pos = (updatedAt: string | null, id: string | null) =>
        updatedAt !== null && id !== null ? { updatedAt, id } : null;
      return {
        cursor: pos(r.cursor_updated_at, r.cursor_id),
        full:
          r.full_run_id === null
            ? null
            : { runId: r.full_run_id, after: pos(r.full_after_updated_at, r.full_after_id) },
        incremental: r.incr_active ? { after: pos(r.incr_after_updated_at, r.incr_after_id) } : null,
        lastSuccessAt: r.last_success_at,
        lastError: r.last_error,
      };
    });
  }

  async applyPage(
    key: SyncKey,
    docs: readonly UpstreamDoc[],
    next: SyncState,
    seenRunId?: string,
  ): Promise<UpsertCounts> {
    return this.tx(`applyPage ${key.collection}`, () => {
      const counts = this.upsertPage(key, docs, seenRunId ?? null);
      this.saveState(key, next);
      return counts;
    });
  }

  async saveSyncState(key: SyncKey, next: SyncState): Promise<void> {
    return this.tx('saveSyncState', () => this.saveState(key, next));
  }

  async unseenIds(key: SyncKey, runId: string): Promise<string[]> {
    return this.tx(`unseenIds ${key.collection}`, () => {
      const unseen = sql<boolean>`(seen_run is null or seen_run <> ${runId})`;
      const rows =
        key.variant === PUBLISHED
          ? this.all(
              this.db
                .selectFrom(collectionTable(key.collection))
                .select('id')
                .where('tenant', '=', key.tenant)
                .where('deleted_at', 'is', null)
                .where(unseen)
                .compile(),
            )
          : this.all(
              this.db
                .selectFrom('doc_variants')
                .select('id')
                .where('collection', '=', key.collection)
                .where('tenant', '=', key.tenant)
                .where('variant', '=', key.variant)
                .where('deleted_at', 'is', null)
                .where(unseen)
                .compile(),
            );
      return rows.map((r) => r.id);
    });
  }

  async completeFull(
    key: SyncKey,
    runId: string,
    next: SyncState,
    now: string,
    keep: readonly string[] = [],
  ): Promise<number> {
    return this.tx(`completeFull ${key.collection}`, () => {
      const kept = keep.length > 0 ? sql<boolean>`id not in (${sql.join(keep)})` : sql<boolean>`1 = 1`;
      const unseen = sql<boolean>`(seen_run is null or seen_run <> ${runId}) and ${kept}`;
      const marked =
        key.variant === PUBLISHED
          ? this.run(
              this.db
                .updateTable(collectionTable(key.collection))
                .set({ deleted_at: now })
                .where('tenant', '=', key.tenant)
                .where('deleted_at', 'is', null)
                .where(unseen)
                .compile(),
            )
          : this.run(
              this.db
                .updateTable('doc_variants')
                .set({ deleted_at: now })
                .where('collection', '=', key.collection)
                .where('tenant', '=', key.tenant)
                .where('variant', '=', key.variant)
                .where('deleted_at', 'is', null)
                .where(unseen)
                .compile(),
            );
      this.saveState(key, next);
      return marked;
    });
  }

  async upsertDocs(key: SyncKey, docs: readonly UpstreamDoc[]): Promise<UpsertCounts> {
    return this.tx(`upsertDocs ${key.collection}`, () => this.upsertPage(key, docs, null));
  }

  async markDeleted(key: SyncKey, id: string, now: string): Promise<boolean> {
    return this.tx(`markDeleted ${key.collection}`, () => {
      const q =
        key.variant === PUBLISHED
          ? this.db
              .updateTable(collectionTable(key.collection))
              .set({ deleted_at: now })
              .where('tenant', '=', key.tenant)
              .where('id', '=', id)
              .where('deleted_at', 'is', null)
              .compile()
          : this.db
              .updateTable('doc_variants')
              .set({ deleted_at: now })
              .where('collection', '=', key.collection)
              .where('tenant', '=', key.tenant)
              .where('variant', '=', key.variant)
              .where('id', '=', id)
              .where('deleted_at', 'is', null)
              .compile();
      return this.run(q) > 0;
    });
  }

  /** Live rows of a key after `afterId` in id order, at most `limit`. */
  private liveChunk(key: SyncKey, afterId: string | null, limit: number, withDoc: boolean) {
    const cols = withDoc ? (['id', 'doc'] as const) : (['id'] as const);
    if (key.variant === PUBLISHED) {
      let q = this.db
        .selectFrom(collectionTable(key.collection))
        .select(cols)
        .where('tenant', '=', key.tenant)
        .where('deleted_at', 'is', null);
      if (afterId !== null) q = q.where('id', '>', afterId);
      return this.all(q.orderBy('id').limit(limit).compile()) as { id: string; doc?: string }[];
    }
    let q = this.db
      .selectFrom('doc_variants')
      .select(cols)
      .where('collection', '=', key.collection)
      .where('tenant', '=', key.tenant)
      .where('variant', '=', key.variant)
      .where('deleted_at', 'is', null);
    if (afterId !== null) q = q.where('id', '>', afterId);
    return this.all(q.orderBy('id').limit(limit).compile()) as { id: string; doc?: string }[];
  }

  async countUpdatedBetween(key: SyncKey, from: string, to: string): Promise<number> {
    return this.tx('countUpdatedBetween', () => {
      const n = sql<number>`count(*)`.as('n');
      const q =
        key.variant === PUBLISHED
          ? this.db
              .selectFrom(collectionTable(key.collection))
              .select(n)
              .where('tenant', '=', key.tenant)
              .where('deleted_at', 'is', null)
              .where('updated_at', '>=', from)
              .where('updated_at', '<=', to)
              .compile()
          : this.db
              .selectFrom('doc_variants')
              .select(n)
              .where('collection', '=', key.collection)
              .where('tenant', '=', key.tenant)
              .where('variant', '=', key.variant)
              .where('deleted_at', 'is', null)
              .where('updated_at', '>=', from)
              .where('updated_at', '<=', to)
              .compile();
      return Number(this.all(q)[0]?.n ?? 0);
    });
  }

  async liveIds(key: SyncKey): Promise<Set<string>> {
    return this.tx('liveIds', () => new Set(this.liveChunk(key, null, -1, false).map((r) => r.id)));
  }

  async scanDocs(key: SyncKey, fn: (doc: UpstreamDoc) => void): Promise<void> {
    // Read in keyset chunks rather than one open cursor, so `fn` may call the store between chunks.
    let after: string | null = null;
    for (;;) {
      const rows = await this.tx('scanDocs', () => this.liveChunk(key, after, SCAN_CHUNK, true));
      for (const r of rows) fn(JSON.parse(r.doc ?? 'null') as UpstreamDoc);
      if (rows.length < SCAN_CHUNK) return;
      after = rows[rows.length - 1]!.id;
    }
  }

  async saveThemeSchema(
    tenant: TenantSlug,
    collection: CollectionSlug,
    schema: UpstreamDoc,
    now: string,
  ): Promise<void> {
    return this.tx('saveThemeSchema', () => {
      const doc = JSON.stringify(schema);
      this.run(
        this.db
          .insertInto('theme_settings_schemas')
          .values({ tenant, collection, doc, fetched_at: now })
          .onConflict((oc) => oc.columns(['tenant', 'collection']).doUpdateSet({ doc, fetched_at: now }))
          .compile(),
      );
    });
  }

  async getThemeSchema(tenant: TenantSlug, collection: CollectionSlug): Promise<UpstreamDoc | null> {
    return this.tx('getThemeSchema', () => {
      const [r] = this.all(
        this.db
          .selectFrom('theme_settings_schemas')
          .select('doc')
          .where('tenant', '=', tenant)
          .where('collection', '=', collection)
          .compile(),
      );
      return r ? (JSON.parse(r.doc) as UpstreamDoc) : null;
    });
  }

  async recordRun(row: SyncRunRow): Promise<void> {
    return this.tx('recordRun', () => {
      this.run(
        this.db
          .insertInto('sync_runs')
          .values({
            run_id: row.runId,
            tenant: row.tenant,
            collection: row.collection,
            variant: row.variant,
            mode: row.mode,
            started_at: row.startedAt,
            finished_at: row.finishedAt,
            status: row.status,
            fetched: row.fetched,
            inserted: row.inserted,
            updated: row.updated,
            unchanged: row.unchanged,
            deleted: row.deleted,
            requests: row.requests,
            ms: Math.round(row.ms),
            error: row.error,
          })
          .compile(),
      );
    });
  }

  async mirrorStatus(): Promise<MirrorStatus[]> {
    return this.tx('mirrorStatus', () => {
      const byKey = new Map<string, { tenant: string; collection: CollectionSlug } & Record<string, unknown>>();
      const entry = (tenant: string, collection: CollectionSlug) => {
        const k = `${tenant}\u0000${collection}`;
        let e = byKey.get(k);
        if (!e) {
          e = { tenant, collection, live: 0, deleted: 0, lastSuccessAt: null, lastError: null };
          byKey.set(k, e);
        }
        return e;
      };
      for (const c of COLLECTIONS) {
        const rows = this.all(
          this.db
            .selectFrom(collectionTable(c))
            .select([
              'tenant',
              sql<number>`sum(case when deleted_at is null then 1 else 0 end)`.as('live'),
              sql<number>`sum(case when deleted_at is null then 0 else 1 end)`.as('deleted'),
            ])
            .groupBy('tenant')
            .compile(),
        );
        for (const r of rows) Object.assign(entry(r.tenant, c), { live: r.live, deleted: r.deleted });
      }
      const states = this.all(
        this.db
          .selectFrom('sync_state')
          .select(['tenant', 'collection', 'last_success_at', 'last_error'])
          .where('variant', '=', PUBLISHED)
          .compile(),
      );
      for (const s of states) {
        if (!(COLLECTIONS as readonly string[]).includes(s.collection)) continue;
        Object.assign(entry(s.tenant, s.collection as CollectionSlug), {
          lastSuccessAt: s.last_success_at,
          lastError: s.last_error,
        });
      }
      const order = (c: CollectionSlug) => COLLECTIONS.indexOf(c);
      return [...byKey.values()]
        .map(
          (e): MirrorStatus => ({
            tenant: e.tenant,
            collection: e.collection,
            live: Number(e.live),
            deleted: Number(e.deleted),
            lastSuccessAt: (e.lastSuccessAt as string | null) ?? null,
            lastError: (e.lastError as string | null) ?? null,
          }),
        )
        .sort((a, b) =>
          a.tenant < b.tenant ? -1 : a.tenant > b.tenant ? 1 : order(a.collection) - order(b.collection),
        );
    });
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      this.stmts.clear();
      this.writers.clear();
      await this.db.destroy();
      // Kysely closes the connection only if it ever ran a query through its driver.
      if (this.raw.open) this.raw.close();
    })();
    return this.closing;
  }
}

/** Opens (creating when missing) the mirror at `path` and brings its schema to the latest migration. */
export async function openSqliteStore(path: string): Promise<Store> {
  const { db, raw } = openDatabase(path);
  try {
    await migrateToLatest(db);
  } catch (err) {
    await db.destroy().catch(() => undefined);
    if (raw.open) raw.close();
    throw storeError('migrate', err);
  }
  return new SqliteStore(db, raw);
}
