import { UnderstudyError } from '../../errors.js';

/**
 * Why a PostgreSQL mirror is not backed up here (`US_USAGE`): a server's own tool does it better (consistent,
 * parallel, restorable with pg_restore, and no second copy of the credentials in understudy). Said plainly rather
 * than half-done.
 */
export const postgresBackupRefused = (): UnderstudyError =>
  new UnderstudyError(
    'US_USAGE',
    'backup copies a SQLite mirror; for a PostgreSQL mirror use pg_dump (e.g. pg_dump -Fc -f mirror.dump "$URL"), ' +
      'or `understudy store copy --from "$URL" --to FILE.db` for a SQLite copy',
  );
