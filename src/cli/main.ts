import { didYouMean } from '../config/did-you-mean.js';
import { describeError } from '../errors.js';
import { VERSION } from '../version.js';
import { generalHelp } from './command-help.js';
import { EXIT, exitCodeFor } from './exit-codes.js';
import { type CommandSpec, leadingCommonFlags } from './parse-flags.js';
import { BACKUP_SPEC } from './specs/backup-spec.js';
import { CHANGES_SPEC } from './specs/changes-spec.js';
import { CHECK_SPEC } from './specs/check-spec.js';
import { DEMO_SPEC } from './specs/demo-spec.js';
import { ENQUEUE_SPEC } from './specs/enqueue-spec.js';
import { SEARCH_SPEC } from './specs/search-spec.js';
import { SERVE_SPEC } from './specs/serve-spec.js';
import { SIM_SPEC } from './specs/sim-spec.js';
import { SQL_SPEC } from './specs/sql-spec.js';
import { STATUS_SPEC } from './specs/status-spec.js';
import { STORE_SPEC } from './specs/store-spec.js';
import { SYNC_SPEC } from './specs/sync-spec.js';
import { WEBHOOKS_SPEC } from './specs/webhooks-spec.js';
import { WORKER_SPEC } from './specs/worker-spec.js';
import { WRITES_SPEC } from './specs/writes-spec.js';

/** A subcommand: parses its own argv, returns the exit code, throws `UnderstudyError`s for the rest. */
export type Command = (argv: string[]) => Promise<number>;

/**
 * Every command: its declaration (name, summary, flags; small modules, read eagerly for the general help) and its
 * implementation, loaded only when it runs (a command's imports are most of the start-up time).
 */
const COMMANDS: readonly { readonly spec: CommandSpec; readonly load: () => Promise<Command> }[] = [
  { spec: SIM_SPEC, load: async () => (await import('./sim-command.js')).simCommand },
  { spec: SYNC_SPEC, load: async () => (await import('./sync-command.js')).syncCommand },
  { spec: WORKER_SPEC, load: async () => (await import('./worker-command.js')).workerCommand },
  { spec: STATUS_SPEC, load: async () => (await import('./status-command.js')).statusCommand },
  { spec: SQL_SPEC, load: async () => (await import('./sql-command.js')).sqlCommand },
  { spec: SEARCH_SPEC, load: async () => (await import('./search-command.js')).searchCommand },
  { spec: ENQUEUE_SPEC, load: async () => (await import('./enqueue-command.js')).enqueueCommand },
  { spec: WRITES_SPEC, load: async () => (await import('./writes-command.js')).writesCommand },
  { spec: CHANGES_SPEC, load: async () => (await import('./changes-command.js')).changesCommand },
  { spec: SERVE_SPEC, load: async () => (await import('./serve-command.js')).serveCommand },
  { spec: WEBHOOKS_SPEC, load: async () => (await import('./webhooks-command.js')).webhooksCommand },
  { spec: CHECK_SPEC, load: async () => (await import('./check-command.js')).checkCommand },
  { spec: BACKUP_SPEC, load: async () => (await import('./backup-command.js')).backupCommand },
  { spec: STORE_SPEC, load: async () => (await import('./store-command.js')).storeCommand },
  { spec: DEMO_SPEC, load: async () => (await import('./demo-command.js')).demoCommand },
];

const commandNamed = (name: string) => COMMANDS.find((c) => c.spec.name === name);
const usage = (): string => generalHelp(COMMANDS.map((c) => c.spec));

/**
 * The reader of stdout went away (`understudy sql … | head`): stop quietly, as a pipeline expects, with no stack
 * trace. A broken stderr is ignored: there is nowhere left to say anything.
 */
let pipesGuarded = false;
function guardPipes(): void {
  if (pipesGuarded) return;
  pipesGuarded = true;
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE' || err.code === 'ERR_STREAM_DESTROYED') process.exit(EXIT.OK);
    throw err;
  });
  process.stderr.on('error', () => undefined);
}

const isClosedPipe = (err: unknown): boolean => {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return code === 'EPIPE' || code === 'ERR_STREAM_DESTROYED';
};

export async function main(argv: string[]): Promise<number> {
  guardPipes();
  // The flags every command takes may come before the command too (`understudy --quiet sync …`): passed on to it.
  const { leading, rest: fromCommand } = leadingCommonFlags(argv);
  const [first, ...afterFirst] = fromCommand;
  const rest = [...leading, ...afterFirst];
  if (first === '--version' || first === '-V') {
    process.stdout.write(`understudy ${VERSION}\n`);
    return EXIT.OK;
  }
  if (!first || first === '--help' || first === '-h' || (first === 'help' && afterFirst.length === 0)) {
    (first ? process.stdout : process.stderr).write(usage());
    return first ? EXIT.OK : EXIT.USAGE;
  }
  const name = first === 'help' ? (afterFirst[0] as string) : first;
  const entry = commandNamed(name);
  if (!entry) {
    const hint = didYouMean(
      name,
      COMMANDS.map((c) => c.spec.name),
    );
    process.stderr.write(`understudy: unknown command "${name}"${hint}; \`understudy --help\` lists the commands\n`);
    return EXIT.USAGE;
  }
  try {
    const command = await entry.load();
    return await command(first === 'help' ? ['--help'] : rest);
  } catch (err) {
    if (isClosedPipe(err)) return EXIT.OK;
    process.stderr.write(`understudy ${name}: ${describeError(err)}\n`);
    if (process.env.UNDERSTUDY_DEBUG) process.stderr.write(`${(err as Error).stack ?? ''}\n`);
    return exitCodeFor(err);
  }
}
