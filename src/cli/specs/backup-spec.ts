import { defineCommand, shared } from '../parse-flags.js';

export const BACKUP_SPEC = defineCommand({
  name: 'backup',
  summary: 'write an online, consistent copy of the mirror',
  usage: 'FILE [--db FILE | --config FILE] [--force] [options]',
  about:
    "Writes an online, consistent copy of the mirror to FILE while workers keep writing (SQLite's backup API, in " +
    'one snapshot). FILE is written beside itself first and renamed into place, so it is never half a copy; its ' +
    'folder is created when missing. FILE may not be the mirror being copied. Prints the path and size of the copy. ' +
    'A PostgreSQL mirror is refused: pg_dump is the tool for it.',
  operands: true,
  flags: {
    db: shared('db', {
      conflicts: ['config'],
      value: 'FILE',
      help: "the mirror's SQLite file (default: the config's database, else $UNDERSTUDY_DB, else ./data/understudy.db); a PostgreSQL mirror is refused: pg_dump copies it",
    }),
    config: shared('config', {
      help: "read the database path from this config (a relative one from the config file's folder)",
    }),
    force: { type: 'boolean', help: 'overwrite FILE if it exists (default: refuse); never the mirror itself' },
    json: shared('json', { help: 'print {"path","bytes","pages"} as JSON' }),
  },
});
