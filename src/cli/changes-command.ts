import { setTimeout as sleep } from 'node:timers/promises';
import { createApp } from '../app/create-app.js';
import type { Change, ChangeFeedReader, ChangeFilter } from '../changes/change-log-port.js';
import { databasePath } from '../config/database-path.js';
import { loadConfigFile } from '../config/load-config.js';
import { UsageError } from '../errors.js';
import { collectionFlags } from './collection-flag.js';
import { printHelp } from './command-help.js';
import { parseFlags } from './parse-flags.js';
import { CHANGES_SPEC } from './specs/changes-spec.js';
import { untilStopped } from './stop-signal.js';

/** Rows read per query: output streams, whatever the log's length. */
const CHUNK = 1000;
/** How often --follow looks for new changes. */
const FOLLOW_POLL_MS = 250;

/** One change as a line of text: seq, time, kind, tenant/collection/id (variant), changed fields or a delete's reason. */
export const changeLine = (c: Change): string =>
  [
    c.seq,
    c.at,
    c.kind.padEnd(6),
    `${c.tenant}/${c.collection}/${c.id}${c.variant === 'published' ? '' : ` (${c.variant})`}`,
    c.kind === 'delete' && c.reason ? `(${c.reason})` : c.fields.join(','),
  ].join('\t');

/** Streams changes to stdout in one of three formats; the JSON array is opened and closed around them. */
/** The rows as `format` prints them; `quiet` (text rows under `--quiet`): nothing, as every command on success. */
function printer(format: 'text' | 'json' | 'nl', quiet: boolean) {
  let first = true;
  const out = (s: string) => {
    if (!quiet) process.stdout.write(s);
  };
  return {
    open: () => format === 'json' && out('['),
    rows(rows: readonly Change[]) {
      if (rows.length === 0) return;
      if (format === 'text') out(`${rows.map(changeLine).join('\n')}\n`);
      else if (format === 'nl') out(`${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
      else {
        out(`${first ? '\n' : ',\n'}${rows.map((r) => JSON.stringify(r)).join(',\n')}`);
        first = false;
      }
    },
    close: () => format === 'json' && out(first ? ']\n' : '\n]\n'),
  };
}

/** Reads changes after `since` matching `filter` in chunks, handing each to `emit`; returns the last seq and count. */
async function drain(
  log: ChangeFeedReader,
  filter: ChangeFilter,
  since: number,
  left: number,
  emit: (rows: Change[]) => void,
): Promise<{ since: number; printed: number }> {
  let printed = 0;
  while (printed < left) {
    const rows = await log.read({ ...filter, since, limit: Math.min(CHUNK, left - printed) });
    if (rows.length === 0) break;
    emit(rows);
    printed += rows.length;
    since = rows[rows.length - 1]?.seq ?? since;
    if (rows.length < CHUNK) break;
  }
  return { since, printed };
}

export async function changesCommand(argv: string[]): Promise<number> {
  const { values, help } = parseFlags(argv, CHANGES_SPEC);
  if (help) return printHelp(CHANGES_SPEC, help);
  const since = values.since;
  const limit = values.limit ?? Number.POSITIVE_INFINITY;
  const collections = values.collection ? collectionFlags(values.collection) : null;
  if (values.reason && values.kind && !values.kind.includes('delete'))
    throw new UsageError('--reason selects deletes: --kind must then include delete');
  const config = values.config ? loadConfigFile(values.config) : null;
  const filter: ChangeFilter = {
    ...(values.tenant ? { tenants: values.tenant } : {}),
    ...(collections ? { collections } : {}),
    ...(values.kind ? { kinds: values.kind } : {}),
    ...(values.reason ? { reasons: values.reason } : {}),
  };
  const json = values.json || values.nl;
  const format = values.follow ? (json ? 'nl' : 'text') : values.json ? 'json' : values.nl ? 'nl' : 'text';
  await using app = await createApp(config, process.env, {
    profile: 'reader',
    database: databasePath(config, process.env, values.db),
  });
  const log = app.mirror.changes;
  // --quiet prints nothing but what --json or --nl asks for.
  const print = printer(format, values.quiet === true && format === 'text');
  print.open();
  // A one-off read waits for the changes committed before it to settle (PostgreSQL: the transactions still in
  // flight); --follow reads what has settled at once and the rest as it settles.
  if (!values.follow) await log.settle();
  let at = await drain(log, filter, since, limit, (rows) => print.rows(rows));
  if (values.follow)
    await untilStopped(async (stop) => {
      let printed = at.printed;
      while (!stop.aborted && printed < limit) {
        // Aborted by a signal: the loop ends below.
        await sleep(FOLLOW_POLL_MS, undefined, { signal: stop }).catch(() => undefined);
        if (stop.aborted) break;
        at = await drain(log, filter, at.since, limit - printed, (rows) => print.rows(rows));
        printed += at.printed;
      }
    });
  print.close();
  return 0;
}
