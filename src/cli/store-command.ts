import { databasePath } from '../config/database-path.js';
import { loadConfigFile } from '../config/load-config.js';
import { UsageError } from '../errors.js';
import { type CopiedTable, copyMirror } from '../store/copy-mirror.js';
import { shownDatabase } from '../store/postgres-engine.js';
import { EXIT } from './exit-codes.js';
import { formatTable } from './format-table.js';
import { COMMON_FLAGS, type CommandSpec, type Flags, helpText, parseFlags } from './parse-flags.js';

const FLAGS = {
  from: {
    type: 'string',
    value: 'DB',
    help: "the mirror to copy: a SQLite file or a postgres:// URL (default: the config's database, else $UNDERSTUDY_DB)",
  },
  to: { type: 'string', value: 'DB', help: 'where to copy it: a SQLite file or a postgres:// URL (migrated first)' },
  config: { type: 'string', value: 'FILE', help: 'read --from from this config (its database)' },
  json: {
    type: 'boolean',
    help: 'print {"from","to","match","tables":[{"table","source","target","copied"}]} as JSON',
  },
  ...COMMON_FLAGS,
} as const satisfies Flags;

const SPEC: CommandSpec<typeof FLAGS> = {
  name: 'store',
  usage: 'copy --to DB [--from DB | --config FILE] [--json] [options]',
  about:
    'store copy: copies a mirror between engines, SQLite ⇄ PostgreSQL (or to another file or database): every ' +
    'record row, variant, sync state, run log and write log row, documents exactly as stored. The target is ' +
    'migrated first; rows already there are kept (ON CONFLICT DO NOTHING), so an interrupted copy is resumed by ' +
    'running it again. Ends by counting every table on both sides: exit 0 when they match, 1 when they do not ' +
    '(writers still at work on the source, or rows refused by the target). Leases are not copied. The source is ' +
    'opened read-only; stop the workers on it first for an exact copy.',
  operands: true,
  flags: FLAGS,
  footer: 'Example:\n  understudy store copy --from ./data/understudy.db --to postgres://user@db:5432/understudy\n',
};

export async function storeCommand(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const { values, positionals } = parseFlags(argv, SPEC);
  if (values.help) {
    process.stdout.write(helpText(SPEC));
    return EXIT.OK;
  }
  const [sub, ...extra] = positionals;
  if (sub !== 'copy')
    throw new UsageError(sub ? `store: unknown subcommand ${sub} (store copy)` : 'store needs a subcommand: copy');
  if (extra.length > 0) throw new UsageError(`unexpected argument ${extra[0]}`);
  if (!values.to) throw new UsageError('store copy needs --to DB');
  if (values.from && values.config) throw new UsageError('give --from or --config, not both');
  const from = values.from ?? databasePath(values.config ? loadConfigFile(values.config) : null, env);
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const progress = (t: CopiedTable) => {
      if (!values.json && !values.quiet && process.stderr.isTTY)
        process.stderr.write(`${t.table}: ${t.target} of ${t.source}\n`);
    };
    const result = await copyMirror(from, values.to, { signal: stop.signal, onTable: progress });
    if (values.json)
      process.stdout.write(
        `${JSON.stringify({ ...result, from: shownDatabase(from), to: shownDatabase(values.to) })}\n`,
      );
    else if (!values.quiet || !result.match)
      process.stdout.write(
        `${formatTable(
          result.tables.map((t) => ({ table: t.table, source: t.source, target: t.target, copied: t.copied })),
        )}\n`,
      );
    if (!result.match) {
      const off = result.tables.filter((t) => t.source !== t.target).map((t) => `${t.table} ${t.target}/${t.source}`);
      process.stderr.write(`understudy store copy: counts differ after the copy: ${off.join(', ')}\n`);
      return EXIT.FAILURE;
    }
    return EXIT.OK;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
