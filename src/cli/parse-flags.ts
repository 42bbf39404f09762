import { Command, CommanderError, Option } from 'commander';
import { UsageError } from '../errors.js';
import { applyCommonFlags } from './command-env.js';

/**
 * One flag, declared once: its parsing, its line of help and its "did you mean" all come from this. Commander
 * (`commander` on npm) does the parsing and the help: the parser gh-, cargo- and npm-style CLIs in Node use, with
 * suggestions for unknown flags, `--flag=value`, `--` and clustered short flags, so none of it is written here.
 */
export interface FlagSpec {
  readonly type: 'string' | 'boolean';
  /** Repeatable: every occurrence is kept, in order. */
  readonly multiple?: boolean;
  readonly short?: string;
  /** The value's placeholder in help (`FILE`, `N`, `URL`). */
  readonly value?: string;
  /** The value may be left out (`--schedule` alone); the flag's value is then `true`. */
  readonly optionalValue?: boolean;
  /** One line (or a few) of help: what it does, its default. */
  readonly help: string;
}

export type Flags = Readonly<Record<string, FlagSpec>>;

type ValueOf<S extends FlagSpec> = S extends { type: 'boolean' }
  ? boolean
  : S extends { multiple: true }
    ? string[]
    : S extends { optionalValue: true }
      ? string | true
      : string;

export type FlagValues<F extends Flags> = { -readonly [K in keyof F]?: ValueOf<F[K]> };

/** A command's declaration: its help is generated from it. */
export interface CommandSpec<F extends Flags> {
  /** As typed after `understudy` (`sync`, `writes`). */
  readonly name: string;
  /** The usage line after `understudy <name>`; default `[options]`. */
  readonly usage?: string;
  /** What the command does, a paragraph or two. */
  readonly about: string;
  /** Whether operands (positional arguments) are taken; the command checks how many. */
  readonly operands?: boolean;
  /**
   * The operands are words (`search`): after the first, an argument starting with `-` that is none of the command's
   * flags is a word too (`swan OR -lake`). A first word starting with `-` goes after `--`.
   */
  readonly words?: boolean;
  readonly flags: F;
  /** Text after the options (examples, subcommands). */
  readonly footer?: string;
}

/** The flags every command takes: `--quiet`, `--env-file`, `--help` (see `applyCommonFlags`). */
export const COMMON_FLAGS = {
  quiet: {
    type: 'boolean',
    short: 'q',
    help: 'print nothing on success but what --json asks for; warnings and errors still go to stderr',
  },
  'env-file': {
    type: 'string',
    value: 'FILE',
    help: 'read NAME=value lines (API keys, REDIS_URL, LOG_LEVEL …) from FILE over the environment (default: the file UNDERSTUDY_ENV_FILE names)',
  },
  help: { type: 'boolean', short: 'h', help: 'show this help' },
} as const satisfies Flags;

/** `--db`, as every command that keeps or reads the mirror takes it: either engine. */
export const DB_FLAG = {
  type: 'string',
  value: 'FILE|URL',
  help: "the mirror: a SQLite file (a relative path from the current directory) or a postgres:// URL (default: the config's database, else $UNDERSTUDY_DB, else ./data/understudy.db)",
} as const satisfies FlagSpec;

function optionOf(name: string, spec: FlagSpec): Option {
  const value =
    spec.type === 'string' ? (spec.optionalValue ? ` [${spec.value ?? 'VALUE'}]` : ` <${spec.value ?? 'VALUE'}>`) : '';
  const opt = new Option(`${spec.short ? `-${spec.short}, ` : ''}--${name}${value}`, spec.help);
  if (spec.multiple) opt.argParser((v: string, prev: string[] | undefined) => [...(prev ?? []), v]);
  return opt;
}

function commandOf<F extends Flags>(spec: CommandSpec<F>): Command {
  const cmd = new Command(`understudy ${spec.name}`)
    .usage(spec.usage ?? '[options]')
    .description(spec.about)
    .helpOption(false)
    .allowExcessArguments(true)
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({ writeOut: () => undefined, writeErr: () => undefined })
    .configureHelp({ helpWidth: 100 });
  for (const [name, flag] of Object.entries(spec.flags)) cmd.addOption(optionOf(name, flag));
  return cmd;
}

/** The command's help: usage, about, every flag with its help, then the footer. */
export function helpText<F extends Flags>(spec: CommandSpec<F>): string {
  const text = commandOf(spec).helpInformation();
  return spec.footer ? `${text}\n${spec.footer.replace(/^\n+/, '')}` : text;
}

/** Commander's message as one line of ours: `unknown option '--colection' (did you mean --collection?)`. */
const usageLine = (err: CommanderError): string =>
  err.message
    .replace(/^error: /, '')
    .replace(/\n\(Did you mean (.*)\?\)/, ' (did you mean $1?)')
    .replace(/\n/g, ' ');

/**
 * A words command's argv with every word after a `--` (commander reads anything starting with `-` before one as a
 * flag): after the first operand, an argument with one leading `-` that is none of the command's flags is a word.
 * The command's flags, the values of those that take one, and anything starting with `--` (a misspelt flag far more
 * often than a word: commander names it with a suggestion) stay where commander looks for them.
 */
function wordsAfterDashes(argv: readonly string[], flags: Flags): string[] {
  const known = new Map<string, FlagSpec>();
  for (const [name, f] of Object.entries(flags)) {
    known.set(`--${name}`, f);
    if (f.short) known.set(`-${f.short}`, f);
  }
  const options: string[] = [];
  const words: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (a === '--') {
      words.push(...argv.slice(i + 1));
      break;
    }
    const eq = a.startsWith('--') ? a.indexOf('=') : -1;
    const flag = known.get(eq > 0 ? a.slice(0, eq) : a);
    const next = argv[i + 1];
    if (flag) {
      options.push(a);
      const takesNext = flag.type === 'string' && eq < 0 && next !== undefined;
      if (takesNext && !(flag.optionalValue && next.startsWith('-'))) options.push(argv[++i] as string);
    } else if (a.startsWith('-') && a.length > 1 && (words.length === 0 || a.startsWith('--'))) {
      options.push(a); // not a word: commander names the unknown flag
    } else {
      words.push(a);
    }
  }
  return [...options, '--', ...words];
}

/**
 * Parses a command's argv against its declared flags (errors are `UsageError`s, exit 2, with a suggestion for a
 * misspelt flag), then applies the flags every command shares (`applyCommonFlags`: the env file, LOG_LEVEL,
 * `--quiet`). Values are keyed by flag name as declared (`values['base-url']`).
 */
export function parseFlags<F extends Flags>(
  argv: readonly string[],
  spec: CommandSpec<F>,
): { values: FlagValues<F>; positionals: string[] } {
  const cmd = commandOf(spec);
  try {
    cmd.parse(spec.words ? wordsAfterDashes(argv, spec.flags) : [...argv], { from: 'user' });
  } catch (err) {
    if (!(err instanceof CommanderError)) throw err;
    const dashed =
      spec.words && err.code === 'commander.unknownOption' ? /'(-[^-'][^']*)'/.exec(err.message)?.[1] : null;
    const hint = dashed ? ` (to search for ${dashed}: understudy ${spec.name} -- ${dashed})` : '';
    throw new UsageError(`${usageLine(err)}${hint}`, { cause: err });
  }
  const opts = cmd.opts();
  const values: Record<string, unknown> = {};
  for (const option of cmd.options) {
    const name = option.long?.replace(/^--/, '') ?? option.attributeName();
    const v = opts[option.attributeName()];
    if (v !== undefined) values[name] = v;
  }
  const positionals = [...cmd.args];
  if (positionals.length > 0 && spec.operands !== true)
    throw new UsageError(`unexpected argument "${positionals[0]}" (see understudy ${spec.name} --help)`);
  const parsed = values as FlagValues<F>;
  if (!values.help) applyCommonFlags(values as { quiet?: boolean; json?: boolean; 'env-file'?: string });
  return { values: parsed, positionals };
}
