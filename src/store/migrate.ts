import { type Kysely, type Migration, type MigrationProvider, Migrator } from 'kysely';
import * as m001 from '../../migrations/2026-11-22-001-create-mirror.js';
import * as m002 from '../../migrations/2026-11-22-002-write-log.js';
import * as m003 from '../../migrations/2026-11-23-001-write-path.js';
import * as m010 from '../../migrations/2026-11-23-010-local-times.js';
import * as m011 from '../../migrations/2026-11-23-011-views.js';
import * as m012 from '../../migrations/2026-11-23-012-search.js';
import * as m060 from '../../migrations/2026-11-23-060-change-log.js';
import * as m061 from '../../migrations/2026-11-23-061-webhook-endpoints.js';
import * as m062 from '../../migrations/2026-11-23-062-mirror-checks.js';
import * as m063 from '../../migrations/2026-11-26-001-change-log-per-statement.js';
import * as m065 from '../../migrations/2026-11-27-010-mirror-check-ids.js';
import * as m066 from '../../migrations/2026-11-27-020-change-log-row-lock.js';
import * as m067 from '../../migrations/2026-11-27-030-deleted-reason.js';
import * as m068 from '../../migrations/2026-11-28-040-watch.js';
import * as m069 from '../../migrations/2026-11-28-050-failure-cleared-by-watch.js';
import * as m070 from '../../migrations/2026-11-28-060-read-indexes.js';
import * as m071 from '../../migrations/2026-11-28-070-change-log-parallel-writers.js';
import * as m072 from '../../migrations/2026-11-28-080-settled-seq-by-index.js';
import * as m073 from '../../migrations/2026-11-28-090-title-indexes.js';
import { UnderstudyError } from '../errors.js';
import type { Database } from './db-schema.js';

/** Every migration, by name; Kysely runs them in name order. Static imports so the build carries them. */
const MIGRATIONS: Record<string, Migration> = {
  '2026-11-22-001-create-mirror': m001,
  '2026-11-22-002-write-log': m002,
  '2026-11-23-001-write-path': m003,
  '2026-11-23-060-change-log': m060,
  '2026-11-23-061-webhook-endpoints': m061,
  '2026-11-23-062-mirror-checks': m062,
  '2026-11-26-001-change-log-per-statement': m063,
  '2026-11-27-010-mirror-check-ids': m065,
  '2026-11-27-020-change-log-row-lock': m066,
  '2026-11-27-030-deleted-reason': m067,
  '2026-11-28-040-watch': m068,
  '2026-11-28-050-failure-cleared-by-watch': m069,
  '2026-11-28-060-read-indexes': m070,
  '2026-11-28-070-change-log-parallel-writers': m071,
  '2026-11-28-080-settled-seq-by-index': m072,
  '2026-11-28-090-title-indexes': m073,
  '2026-11-23-010-local-times': m010,
  '2026-11-23-011-views': m011,
  '2026-11-23-012-search': m012,
};

/** The names of every migration this build knows, in order (readiness checks a database has them all). */
export const MIGRATION_NAMES: readonly string[] = Object.keys(MIGRATIONS).sort();

/** Every migration of this build, for Kysely's `Migrator` (tests migrate to a point in between with it). */
export const migrationProvider: MigrationProvider = { getMigrations: async () => MIGRATIONS };
const provider = migrationProvider;

/**
 * Whether `db` has exactly this build's migrations applied, read without taking any lock. Kysely's migrator first
 * takes a session-level advisory lock on PostgreSQL, a key any session may hold (a user's `understudy sql`
 * statement included, for as long as it runs): a mirror with nothing to migrate must not wait for it.
 */
async function upToDate(db: Kysely<Database>): Promise<boolean> {
  const loose = db as unknown as Kysely<{ kysely_migration: { name: string } }>;
  try {
    const applied = new Set((await loose.selectFrom('kysely_migration').select('name').execute()).map((r) => r.name));
    return applied.size === MIGRATION_NAMES.length && MIGRATION_NAMES.every((m) => applied.has(m));
  } catch {
    return false; // no migration table yet: a new mirror
  }
}

/**
 * Brings the schema to the latest migration; throws `US_STORE` naming the migration that failed. A mirror that
 * has every migration of this build and no other is left alone (`upToDate`); any other goes through the migrator,
 * which also reports a mirror migrated by a newer build.
 *
 * Processes opening a fresh file at the same moment (two workers starting together) race: Kysely's migrator takes
 * no lock on SQLite, so each reads "nothing applied" and the later one fails on a table or column the earlier
 * created. It then tries again, now seeing what the other applied, for as long as the other makes progress (a
 * loaded machine may take seconds): only `STALLED_ATTEMPTS` failures in a row with no migration applied in between
 * mean a migration really is broken, and it is reported.
 */
export async function migrateToLatest(db: Kysely<Database>): Promise<void> {
  if (await upToDate(db)) return;
  let applied = await appliedCount(db);
  for (let stalled = 1; ; stalled++) {
    const { error, results } = await new Migrator({ db, provider }).migrateToLatest();
    if (!error) return;
    const now = await appliedCount(db);
    if (now > applied) stalled = 0; // another process is migrating: wait for it
    applied = now;
    if (stalled < STALLED_ATTEMPTS) {
      await new Promise((r) => setTimeout(r, 50 + Math.random() * 100));
      continue;
    }
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new UnderstudyError('US_STORE', `migration ${failed} failed: ${(error as Error).message}`, { cause: error });
  }
}

/** Failures in a row, with no migration applied by anyone in between, before a migration is reported broken. */
const STALLED_ATTEMPTS = 5;

/** How many migrations `db` records as applied (0 before the migration table exists). */
async function appliedCount(db: Kysely<Database>): Promise<number> {
  const loose = db as unknown as Kysely<{ kysely_migration: { name: string } }>;
  try {
    const row = await loose
      .selectFrom('kysely_migration')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  } catch {
    return 0;
  }
}
