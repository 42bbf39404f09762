import { describeError } from '../errors.js';
import { exitCodeFor } from './exit-codes.js';

/** A subcommand: parses its own argv, returns the exit code, throws `UnderstudyError`s for the rest. */
export type Command = (argv: string[]) => Promise<number>;

const COMMANDS: Record<string, { summary: string; load: () => Promise<Command> }> = {
  sim: { summary: 'run the Partners API simulator', load: async () => (await import('./sim-command.js')).simCommand },
  sync: { summary: 'mirror tenants into SQLite', load: async () => (await import('./sync-command.js')).syncCommand },
  worker: {
    summary: 'run sync workers on the Redis queue, with schedules',
    load: async () => (await import('./worker-command.js')).workerCommand,
  },
  status: {
    summary: 'mirror freshness, schedules and queue counts',
    load: async () => (await import('./status-command.js')).statusCommand,
  },
  sql: {
    summary: 'run read-only SQL over the mirror',
    load: async () => (await import('./sql-command.js')).sqlCommand,
  },
  enqueue: {
    summary: 'queue a write to the Partners API (validated first)',
    load: async () => (await import('./enqueue-command.js')).enqueueCommand,
  },
  writes: {
    summary: 'failed writes: list, show, retry',
    load: async () => (await import('./writes-command.js')).writesCommand,
  },
  backup: {
    summary: 'write an online, consistent copy of the mirror',
    load: async () => (await import('./backup-command.js')).backupCommand,
  },
  demo: {
    summary: 'mirror the bundled simulator into a temporary file and query it',
    load: async () => (await import('./demo-command.js')).demoCommand,
  },
};

const usage = (): string =>
  [
    'usage: understudy <command> [options]',
    '',
    'commands:',
    ...Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(10)} ${c.summary}`),
    '',
    'Run `understudy <command> --help` for its options.',
  ].join('\n');

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(`${usage()}\n`);
    return name ? 0 : 2;
  }
  const entry = COMMANDS[name];
  if (!entry) {
    process.stderr.write(`understudy: unknown command "${name}"\n${usage()}\n`);
    return 2;
  }
  try {
    const command = await entry.load();
    return await command(rest);
  } catch (err) {
    process.stderr.write(`understudy ${name}: ${describeError(err)}\n`);
    if (process.env.UNDERSTUDY_DEBUG) process.stderr.write(`${(err as Error).stack ?? ''}\n`);
    return exitCodeFor(err);
  }
}
