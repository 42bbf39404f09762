import { existsSync } from 'node:fs';
import type { Kysely } from 'kysely';
import type { ChangeFeedReader } from '../changes/change-log-port.js';
import { ConfigError, UnderstudyError } from '../errors.js';
import type { MirrorStatus } from '../sync/store-port.js';
import type { CollectionSlug } from '../vocabulary/collections.js';
import { parseExactJson } from '../vocabulary/exact-json.js';
import { isJsonObject, type TenantSlug, type UpstreamDoc } from '../vocabulary/ids.js';
import type { WriteLogReader } from '../writes/write-log.js';
import { type BackupResult, backupSqlite, postgresBackupRefused } from './backup.js';
import { changesReader } from './change-log.js';
import type { Database } from './db-schema.js';
import { MIGRATION_NAMES } from './migrate.js';
import { mirrorHealth } from './mirror-health.js';
import { openDatabase } from './open-database.js';
import { connectPostgres, isPostgresUrl } from './postgres-engine.js';
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
   * Writes a consistent copy of a SQLite mirror to `dest` (SQLite's backup API, one snapshot; see `backupSqlite`).
   * A PostgreSQL mirror is refused (`US_USAGE`): back it up with the server's tools.
   */
  backup(dest: string, opts?: { readonly force?: boolean }): Promise<BackupResult>;
  /** Closes the connection. Idempotent. */
  close(): Promise<void>;
}

export interface MirrorReaderOptions {
  /**
   * `current` (default): the mirror must carry every migration of this build, so the reads find the tables they
   * expect; `any`: any mirror of some version (a backup copies whatever is there).
   */
  readonly schema?: 'current' | 'any';
}

/**
 * Opens the mirror named by `database` read-only: a SQLite file (which must exist: nothing is created) or a
 * PostgreSQL URL (every transaction read-only). Throws `US_CONFIG` naming it when it does not exist, cannot be
 * opened, is not an understudy mirror, or (schema `current`) lacks a migration of this build.
 */
export async function openMirrorReader(database: string, opts: MirrorReaderOptions = {}): Promise<MirrorReader> {
  const postgres = isPostgresUrl(database);
  if (!postgres && database !== ':memory:' && !existsSync(database))
    throw new ConfigError(`database ${database} does not exist (run \`understudy sync\` first, or pass --db)`);
  let db: Kysely<Database>;
  let close: () => Promise<void>;
  let backup: MirrorReader['backup'];
  if (postgres) {
    const engine = await connectPostgres(database, { maxConnections: 1, readOnly: true });
    db = engine.db;
    close = () => engine.close();
    backup = async () => {
      throw postgresBackupRefused();
    };
  } else {
    let opened: ReturnType<typeof openDatabase>;
    try {
      opened = openDatabase(database, { readonly: true });
    } catch (err) {
      throw new ConfigError(`cannot open database ${database}: ${(err as Error).message}`, { cause: err });
    }
    const { raw } = opened;
    db = opened.db;
    let closing: Promise<void> | null = null;
    close = () => {
      closing ??= (async () => {
        await opened.db.destroy().catch(() => undefined);
        if (raw.open) raw.close();
      })();
      return closing;
    };
    backup = (dest, o = {}) => backupSqlite(raw, database, dest, o);
  }
  try {
    const applied = await mirrorHealth(db, null).appliedMigrations();
    if (applied.length === 0) throw new ConfigError(`${database} is not an understudy mirror (no migrations applied)`);
    const missing = MIGRATION_NAMES.filter((m) => !applied.includes(m));
    if ((opts.schema ?? 'current') === 'current' && missing.length > 0)
      throw new ConfigError(
        `${database} is older than this understudy (migration ${missing[0]} not applied): run \`understudy sync\` ` +
          'or a worker on it once to migrate it',
      );
  } catch (err) {
    await close();
    if (err instanceof UnderstudyError) throw err;
    throw new ConfigError(`cannot read database ${database}: ${(err as Error).message}`, { cause: err });
  }
  const read = async <T>(what: string, fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      throw new UnderstudyError('US_STORE', `store: ${what} failed: ${(err as Error).message}`, { cause: err });
    }
  };
  return {
    database,
    mirrorStatus: () => read('mirrorStatus', () => mirrorStatus(db)),
    writeLog: kyselyWriteLog(db),
    changes: changesReader(db),
    getThemeSchema: (tenant, collection) => read('getThemeSchema', () => themeSchemas.get(db, tenant, collection)),
    customAttributes: (tenant) =>
      read('customAttributes', async () => {
        const row = await db
          .selectFrom('custom_attributes')
          .select('doc')
          .where('tenant', '=', tenant)
          .where('deleted_at', 'is', null)
          .orderBy('id')
          .executeTakeFirst();
        const doc = row ? parseExactJson(row.doc) : null;
        return isJsonObject(doc) ? doc : null;
      }),
    backup,
    close,
  };
}
