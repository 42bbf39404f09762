import { resolve } from 'node:path';
import { databasePath } from '../config/database-path.js';
import { loadConfigFile } from '../config/load-config.js';
import { UsageError } from '../errors.js';
import { backupDatabase } from '../ops/backup.js';
import { parseFlags } from './parse-flags.js';

const HELP = `usage: understudy backup FILE [--db FILE | --config FILE] [--force]

Writes an online, consistent copy of the mirror to FILE while workers keep writing (SQLite's backup API, in one
snapshot). FILE is written beside itself first and renamed into place, so it is never half a copy. Prints the
path and size of the copy.

  --db FILE       SQLite file of the mirror (default: the config's database, else $UNDERSTUDY_DB,
                  else ./data/understudy.db)
  --config FILE   read the database path from this config
  --force         overwrite FILE if it exists (default: refuse)
  --json          print {"path","bytes","pages"} as JSON
`;

const FLAGS = {
  db: { type: 'string' },
  config: { type: 'string' },
  force: { type: 'boolean' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

export async function backupCommand(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const { values, positionals } = parseFlags(argv, FLAGS, true);
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const [dest, ...extra] = positionals;
  if (!dest) throw new UsageError('backup needs the FILE to write');
  if (extra.length > 0) throw new UsageError(`unexpected argument ${extra[0]}`);
  if (values.db && values.config) throw new UsageError('give --db or --config, not both');
  const source = databasePath(values.config ? loadConfigFile(values.config) : null, env, values.db);
  const result = await backupDatabase(source, dest, { force: values.force ?? false });
  if (values.json) process.stdout.write(`${JSON.stringify(result)}\n`);
  else process.stdout.write(`${resolve(result.path)}\t${result.bytes} bytes\n`);
  return 0;
}
