import { resolve } from 'node:path';
import { createApp } from '../app/create-app.js';
import { databasePath } from '../config/database-path.js';
import { loadConfigFile } from '../config/load-config.js';
import { UsageError } from '../errors.js';
import { assertBackupable } from '../store/backup.js';
import { COMMON_FLAGS, type CommandSpec, type Flags, helpText, parseFlags } from './parse-flags.js';

const FLAGS = {
  db: {
    type: 'string',
    value: 'FILE',
    help: "the mirror's SQLite file (default: the config's database, else $UNDERSTUDY_DB, else ./data/understudy.db); a PostgreSQL mirror is refused: pg_dump copies it",
  },
  config: {
    type: 'string',
    value: 'FILE',
    help: "read the database path from this config (a relative one from the config file's folder)",
  },
  force: { type: 'boolean', help: 'overwrite FILE if it exists (default: refuse); never the mirror itself' },
  json: { type: 'boolean', help: 'print {"path","bytes","pages"} as JSON' },
  ...COMMON_FLAGS,
} as const satisfies Flags;

const SPEC: CommandSpec<typeof FLAGS> = {
  name: 'backup',
  usage: 'FILE [--db FILE | --config FILE] [--force] [options]',
  about:
    "Writes an online, consistent copy of the mirror to FILE while workers keep writing (SQLite's backup API, in " +
    'one snapshot). FILE is written beside itself first and renamed into place, so it is never half a copy; its ' +
    'folder is created when missing. FILE may not be the mirror being copied. Prints the path and size of the copy. ' +
    'A PostgreSQL mirror is refused: pg_dump is the tool for it.',
  operands: true,
  flags: FLAGS,
};

export async function backupCommand(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const { values, positionals } = parseFlags(argv, SPEC);
  if (values.help) {
    process.stdout.write(helpText(SPEC));
    return 0;
  }
  const [dest, ...extra] = positionals;
  if (!dest) throw new UsageError('backup needs the FILE to write');
  if (extra.length > 0) throw new UsageError(`unexpected argument ${extra[0]}`);
  if (values.db && values.config) throw new UsageError('give --db or --config, not both');
  const config = values.config ? loadConfigFile(values.config) : null;
  const database = databasePath(config, env, values.db);
  assertBackupable(database);
  // The source is opened read-only and must exist: a wrong path is an error, never a new empty mirror.
  await using app = await createApp(config, env, { profile: 'reader', database, schema: 'any' });
  const result = await app.mirror.backup(dest, { force: values.force ?? false });
  if (values.json) process.stdout.write(`${JSON.stringify(result)}\n`);
  else if (!values.quiet) process.stdout.write(`${resolve(result.path)}\t${result.bytes} bytes\n`);
  return 0;
}
