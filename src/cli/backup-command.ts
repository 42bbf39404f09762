import { resolve } from 'node:path';
import { createApp } from '../app/create-app.js';
import { databasePath } from '../config/database-path.js';
import { loadConfigFile } from '../config/load-config.js';
import { UsageError } from '../errors.js';
import { assertBackupable } from '../store/backup.js';
import { printHelp } from './command-help.js';
import { parseFlags } from './parse-flags.js';
import { BACKUP_SPEC } from './specs/backup-spec.js';

export async function backupCommand(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const { values, positionals, help } = parseFlags(argv, BACKUP_SPEC);
  if (help) return printHelp(BACKUP_SPEC, help);
  const [dest, ...extra] = positionals;
  if (!dest) throw new UsageError('backup needs the FILE to write');
  if (extra.length > 0) throw new UsageError(`unexpected argument ${extra[0]}`);
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
