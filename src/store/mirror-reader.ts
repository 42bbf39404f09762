import type { Kysely } from 'kysely';
import type { ChangeFeedReader } from '../changes/change-log-port.js';
import { ConfigError, isUnderstudyError, UnderstudyError } from '../errors.js';
import type { MirrorStatus } from '../sync/store-port.js';
import { type CollectionSlug, tableFor } from '../vocabulary/collections.js';
import { parseExactJson } from '../vocabulary/exact-json.js';
import { isJsonObject, type TenantSlug, type UpstreamDoc } from '../vocabulary/ids.js';
import type { WriteLogReader } from '../writes/write-log.js';
import type { BackupResult } from './backup.js';
import { changesReader } from './change-log.js';
import type { Database } from './db-schema.js';
import { dialectFor, type ReaderConnection } from './dialect.js';
import type { MirrorConnection } from './engine.js';
import { MIGRATION_NAMES } from './migrate.js';
import { mirrorHealth } from './mirror-health.js';
import { mirrorStatus } from './status-queries.js';
import { themeSchemas } from './theme-schema-table.js';
import { kyselyWriteLog } from './write-log.js';

/**
 * The mirror as the commands that only read it see it (status, backup, `writes failed|show`, enqueue's theme
 * check): one read-only connection to a mirror that already exists. Nothing here creates, migrates or changes it,
 * so it reads a mirror its user may not write (a chmod 444 copy, a backup on read-only media).
 */
export interface MirrorReader {
  /** The database setting it was opened from (a SQLite path or a PostgreSQL URL). */
  readonly database: string;
  /** Live and deleted counts, last success and last error for every tenant and collection in the mirror. */
  mirrorStatus(): Promise<MirrorStatus[]>;
  /** The write log's rows. */
  readonly writeLog: WriteLogReader;
  /** The change log, the webhook endpoints and the last self-checks (`changes`, `status`). */
  readonly changes: ChangeFeedReader;
  /** A stored theme-settings schema, or null. */
  getThemeSchema(tenant: TenantSlug, collection: CollectionSlug): Promise<UpstreamDoc | null>;
  /** The tenant's live Custom Attribute record (its attribute definitions), or null when none is mirrored. */
  customAttributes(tenant: TenantSlug): Promise<UpstreamDoc | null>;
  /**
   * One record as the mirror holds it: the published copy, or a variant (`draft`) from `doc_variants`; a tombstoned
   * row only when `deleted` is set (what a delete answered with). Null when the mirror does not hold it.
   */
  recordDoc(key: RecordDocKey): Promise<UpstreamDoc | null>;
  /**
   * Writes a consistent copy of a SQLite mirror to `dest` (SQLite's backup API, one snapshot; see `backupSqlite`).
   * A PostgreSQL mirror is refused (`US_USAGE`): back it up with the server's tools.
   */
  backup(dest: string, opts?: { readonly force?: boolean }): Promise<BackupResult>;
  /** Closes the connection. Idempotent. */
  close(): Promise<void>;
}

/** Which record `recordDoc` reads. */
export interface RecordDocKey {
  readonly tenant: TenantSlug;
  readonly collection: CollectionSlug;
  readonly id: string;
  /** Default `published`. */
  readonly variant?: string;
  /** Also a tombstoned row. */
  readonly deleted?: boolean;
}

export interface MirrorReaderOptions {
  /**
   * `current` (default): the mirror must carry every migration of this build, so the reads find the tables they
   * expect; `any`: any mirror of some version (a backup copies whatever is there).
   */
  readonly schema?: 'current' | 'any';
}

/**
 * Throws `US_CONFIG` naming the mirror when it is not an understudy mirror or (schema `current`) lacks a migration
 * of this build.
 */
async function assertMirror(connection: MirrorConnection, database: string, schema: MirrorReaderOptions['schema']) {
  const applied = await mirrorHealth(connection).appliedMigrations();
  if (applied.length === 0) throw new ConfigError(`${database} is not an understudy mirror (no migrations applied)`);
  const missing = MIGRATION_NAMES.filter((m) => !applied.includes(m));
  if ((schema ?? 'current') === 'current' && missing.length > 0)
    throw new ConfigError(
      `${database} is older than this understudy (migration ${missing[0]} not applied): run \`understudy sync\` ` +
        'or a worker on it once to migrate it',
    );
}

/** Runs one read, a failure as `US_STORE` naming it. */
const read = async <T>(what: string, fn: () => Promise<T>): Promise<T> => {
  try {
    return await fn();
  } catch (err) {
    throw new UnderstudyError('US_STORE', `store: ${what} failed: ${(err as Error).message}`, { cause: err });
  }
};

/** The tenant's live Custom Attribute record, or null. */
async function customAttributes(db: Kysely<Database>, tenant: TenantSlug): Promise<UpstreamDoc | null> {
  const row = await db
    .selectFrom('custom_attributes')
    .select('doc')
    .where('tenant', '=', tenant)
    .where('deleted_at', 'is', null)
    .orderBy('id')
    .executeTakeFirst();
  const doc = row ? parseExactJson(row.doc) : null;
  return isJsonObject(doc) ? doc : null;
}

/** One record's doc (see `MirrorReader.recordDoc`). */
async function recordDoc(db: Kysely<Database>, k: RecordDocKey): Promise<UpstreamDoc | null> {
  const variant = k.variant ?? 'published';
  const row =
    variant === 'published'
      ? await db
          .selectFrom(tableFor(k.collection) as 'pages')
          .select(['doc', 'deleted_at'])
          .where('tenant', '=', k.tenant)
          .where('id', '=', k.id)
          .executeTakeFirst()
      : await db
          .selectFrom('doc_variants')
          .select(['doc', 'deleted_at'])
          .where('tenant', '=', k.tenant)
          .where('collection', '=', k.collection)
          .where('id', '=', k.id)
          .where('variant', '=', variant)
          .executeTakeFirst();
  if (!row || (row.deleted_at !== null && !k.deleted)) return null;
  const doc = parseExactJson(row.doc);
  return isJsonObject(doc) ? doc : null;
}

/** The reads of a mirror over its read-only connection. */
function readerOver(database: string, connection: ReaderConnection): MirrorReader {
  const { db } = connection;
  return {
    database,
    mirrorStatus: () => read('mirrorStatus', () => mirrorStatus(db)),
    writeLog: kyselyWriteLog(db),
    changes: changesReader(connection),
    getThemeSchema: (tenant, collection) => read('getThemeSchema', () => themeSchemas.get(db, tenant, collection)),
    customAttributes: (tenant) => read('customAttributes', () => customAttributes(db, tenant)),
    recordDoc: (key) => read('recordDoc', () => recordDoc(db, key)),
    backup: (dest, opts) => connection.backup(dest, opts),
    close: () => connection.close(),
  };
}

/**
 * Opens the mirror named by `database` read-only: a SQLite file (which must exist: nothing is created) or a
 * PostgreSQL URL (every transaction read-only). Throws `US_CONFIG` naming it when it does not exist, cannot be
 * opened, is not an understudy mirror, or (schema `current`) lacks a migration of this build.
 */
export async function openMirrorReader(database: string, opts: MirrorReaderOptions = {}): Promise<MirrorReader> {
  const connection = await dialectFor(database).openReader();
  try {
    await assertMirror(connection, database, opts.schema);
  } catch (err) {
    await connection.close();
    if (isUnderstudyError(err)) throw err;
    throw new ConfigError(`cannot read database ${database}: ${(err as Error).message}`, { cause: err });
  }
  return readerOver(database, connection);
}
