import { databasePath } from '../config/database-path.js';
import { loadConfigFile } from '../config/load-config.js';
import { type CopiedTable, copyMirror } from '../store/copy-mirror.js';
import { shownDatabase } from '../store/dialect.js';
import { printHelp } from './command-help.js';
import { EXIT } from './exit-codes.js';
import { formatTable } from './format-table.js';
import { parseFlags } from './parse-flags.js';
import { STORE_SPEC } from './specs/store-spec.js';
import { untilStopped } from './stop-signal.js';

export async function storeCommand(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const { values, help } = parseFlags(argv, STORE_SPEC);
  if (help) return printHelp(STORE_SPEC, help);
  const from = values.from ?? databasePath(values.config ? loadConfigFile(values.config) : null, env);
  return untilStopped(async (stop) => {
    const progress = (t: CopiedTable) => {
      if (!values.json && !values.quiet && process.stderr.isTTY)
        process.stderr.write(`${t.table}: ${t.target} of ${t.source}\n`);
    };
    const result = await copyMirror(from, values.to, { signal: stop, onTable: progress });
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
  });
}
