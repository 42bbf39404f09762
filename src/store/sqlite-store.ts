import type BetterSqlite3 from 'better-sqlite3';
import type { Kysely } from 'kysely';
import { UnderstudyError } from '../errors.js';
import type { CollectionSlug } from '../vocabulary/collections.js';
import type { TenantSlug, UpstreamDoc } from '../vocabulary/ids.js';
import type { Database } from './db-schema.js';
import { openMigratedDatabase } from './migrate.js';
import { PreparedStatements } from './prepared-statements.js';
import { RecordTables } from './record-table.js';
import { appendRun } from './run-log.js';
import { mirrorStatus } from './status-queries.js';
import type { MirrorStatus, Store, SyncKey, SyncRunRow, SyncState, UpsertCounts } from './store.js';
import { SyncStates } from './sync-state-table.js';
import { ThemeSchemas } from './theme-schema-table.js';

const SCAN_CHUNK = 500;

const storeError = (what: string, err: unknown): UnderstudyError =>
  err instanceof UnderstudyError
    ? err
    : new UnderstudyError('US_STORE', `store: ${what} failed: ${(err as Error)?.message ?? String(err)}`, {
        cause: err,
      });

/**
 * The mirror in one SQLite file. Queries are built with Kysely (portable SQL), compiled once, and run as
 * prepared better-sqlite3 statements inside `raw.transaction`: every method is synchronous underneath, so no two
 * transactions ever interleave on the one connection. Each method is one transaction over the table modules:
 * the record tables (`record-table.ts`), sync state, the run log, theme schemas and the status queries.
 */
export class SqliteStore implements Store {
  private readonly stmts: PreparedStatements;
  private readonly records: RecordTables;
  private readonly states: SyncStates;
  private readonly themeSchemas: ThemeSchemas;
  private closing: Promise<void> | undefined;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly raw: BetterSqlite3.Database,
  ) {
    this.stmts = new PreparedStatements(raw);
    this.records = new RecordTables(db, this.stmts);
    this.states = new SyncStates(db, this.stmts);
    this.themeSchemas = new ThemeSchemas(db, this.stmts);
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
    return this.tx('getSyncState', () => this.states.get(key));
  }

  async applyPage(
    key: SyncKey,
    docs: readonly UpstreamDoc[],
    next: SyncState,
    seenRunId?: string,
  ): Promise<UpsertCounts> {
    return this.tx(`applyPage ${key.collection}`, () => {
      const counts = this.records.of(key).upsertPage(docs, seenRunId ?? null);
      this.states.save(key, next);
      return counts;
    });
  }

  async saveSyncState(key: SyncKey, next: SyncState): Promise<void> {
    return this.tx('saveSyncState', () => this.states.save(key, next));
  }

  async unseenIds(key: SyncKey, runId: string): Promise<string[]> {
    return this.tx(`unseenIds ${key.collection}`, () => this.records.of(key).unseenIds(runId));
  }

  async completeFull(
    key: SyncKey,
    runId: string,
    next: SyncState,
    now: string,
    keep: readonly string[] = [],
  ): Promise<number> {
    return this.tx(`completeFull ${key.collection}`, () => {
      const marked = this.records.of(key).tombstoneUnseen(runId, keep, now);
      this.states.save(key, next);
      return marked;
    });
  }

  async upsertDocs(key: SyncKey, docs: readonly UpstreamDoc[]): Promise<UpsertCounts> {
    return this.tx(`upsertDocs ${key.collection}`, () => this.records.of(key).upsertPage(docs, null));
  }

  async markDeleted(key: SyncKey, id: string, now: string): Promise<boolean> {
    return this.tx(`markDeleted ${key.collection}`, () => this.records.of(key).tombstone(id, now));
  }

  async countUpdatedBetween(key: SyncKey, from: string, to: string): Promise<number> {
    return this.tx('countUpdatedBetween', () => this.records.of(key).countUpdatedBetween(from, to));
  }

  async liveIds(key: SyncKey): Promise<Set<string>> {
    return this.tx(
      'liveIds',
      () =>
        new Set(
          this.records
            .of(key)
            .liveChunk(null, -1, false)
            .map((r) => r.id),
        ),
    );
  }

  async scanDocs(key: SyncKey, fn: (doc: UpstreamDoc) => void): Promise<void> {
    // Read in keyset chunks rather than one open cursor, so `fn` may call the store between chunks.
    const table = this.records.of(key);
    let after: string | null = null;
    for (;;) {
      const rows = await this.tx('scanDocs', () => table.liveChunk(after, SCAN_CHUNK, true));
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
    return this.tx('saveThemeSchema', () => this.themeSchemas.save(tenant, collection, schema, now));
  }

  async getThemeSchema(tenant: TenantSlug, collection: CollectionSlug): Promise<UpstreamDoc | null> {
    return this.tx('getThemeSchema', () => this.themeSchemas.get(tenant, collection));
  }

  async recordRun(row: SyncRunRow): Promise<void> {
    return this.tx('recordRun', () => appendRun(this.db, this.stmts, row));
  }

  async mirrorStatus(): Promise<MirrorStatus[]> {
    return this.tx('mirrorStatus', () => mirrorStatus(this.db, this.stmts));
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      this.stmts.clear();
      this.records.clear();
      await this.db.destroy();
      // Kysely closes the connection only if it ever ran a query through its driver.
      if (this.raw.open) this.raw.close();
    })();
    return this.closing;
  }
}

/** Opens (creating when missing) the mirror at `path` and brings its schema to the latest migration. */
export async function openSqliteStore(path: string): Promise<Store> {
  const { db, raw } = await openMigratedDatabase(path);
  return new SqliteStore(db, raw);
}
