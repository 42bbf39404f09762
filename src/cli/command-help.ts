import { Command as Program } from 'commander';
import { VERSION } from '../version.js';
import { COMMON_FLAGS, type CommandSpec, commandOf, type SubcommandSpec } from './parse-flags.js';

const WIDTH = 100;

/** `text` wrapped to `WIDTH` columns, every line after the first indented by `indent`. */
function wrap(text: string, indent: number): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && indent + line.length + 1 + word.length > WIDTH) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  lines.push(line);
  return lines.join(`\n${' '.repeat(indent)}`);
}

/** The `Subcommands:` block of a command's help, from its declaration. */
function subcommandsText(subs: Readonly<Record<string, SubcommandSpec>>): string {
  const width = Math.max(...Object.values(subs).map((s) => s.usage.length));
  const rows = Object.values(subs).map((s) => `  ${s.usage.padEnd(width)}  ${wrap(s.help, width + 4)}`);
  return `Subcommands:\n${rows.join('\n')}\n`;
}

/** The command's help: usage, about, every flag with its help, its subcommands, then the footer. */
export function helpText(spec: CommandSpec): string {
  const after = [
    spec.subcommands ? subcommandsText(spec.subcommands) : '',
    spec.footer ? spec.footer.replace(/^\n+/, '') : '',
  ].filter(Boolean);
  const text = commandOf(spec).helpInformation();
  return after.length > 0 ? `${text}\n${after.join('\n')}` : text;
}

/**
 * Shows the help `parseFlags` found wanted: asked (`--help`) on stdout, exit 0; needed (a subcommand missing) on
 * stderr, exit 2. Returns the exit code.
 */
export function printHelp(spec: CommandSpec, help: 'asked' | 'needed'): number {
  (help === 'asked' ? process.stdout : process.stderr).write(helpText(spec));
  return help === 'asked' ? 0 : 2;
}

/** `understudy --help`: every command's summary, and the flags every command takes, from their declarations. */
export function generalHelp(specs: readonly CommandSpec[]): string {
  const program = new Program('understudy')
    .usage('<command> [options]')
    .description(
      'Keeps a local, queryable mirror of Content Partners API tenants in SQLite or PostgreSQL\n' +
        '(every command works on either: --db FILE or --db postgres://…, or the config\'s "database")\n' +
        'and pushes changes back. The options below are taken by every command;\n' +
        '`understudy help <command>` shows its own.',
    )
    .helpOption('-h, --help', 'show help (`understudy <command> --help`: that command’s)')
    .version(VERSION, '-V, --version', 'print the version')
    .configureHelp({ helpWidth: WIDTH });
  for (const [name, flag] of Object.entries(COMMON_FLAGS)) {
    if (name === 'help') continue;
    const short = 'short' in flag ? `-${flag.short}, ` : '';
    program.option(`${short}--${name}${flag.type !== 'boolean' ? ` <${flag.value}>` : ''}`, flag.help);
  }
  for (const spec of specs) program.command(spec.name).description(spec.summary);
  program.command('help [command]').description('show help for a command');
  return program.helpInformation();
}
