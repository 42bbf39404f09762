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
  /** The command cannot run without it: a usage error naming it and its value (exit 2), checked once by `parseFlags`. */
  readonly required?: boolean;
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

type RequiredOf<F extends Flags> = { [K in keyof F]: F[K] extends { required: true } ? K : never }[keyof F];

/** The parsed values, keyed by flag name as declared; a required flag is always there (unless help was asked). */
export type FlagValues<F extends Flags> = { -readonly [K in Exclude<keyof F, RequiredOf<F>>]?: ValueOf<F[K]> } & {
  -readonly [K in RequiredOf<F>]: ValueOf<F[K]>;
};

/** A subcommand (`writes show <jobId>`): its usage, its help, and how many operands follow it. */
export interface SubcommandSpec {
  /** As shown in help: `show <jobId>`. */
  readonly usage: string;
  readonly help: string;
  /** `none`; `one` (named by `operand`, default `argument`); `ids-or-all`: ids, or none with `--all`. */
  readonly operands: 'none' | 'one' | 'ids-or-all';
  /** What the one operand is, in an error: `job id` (`writes show takes one job id`). */
  readonly operand?: string;
}

/** A command's declaration: `understudy --help`, its own help and its parsing are all generated from it. */
export interface CommandSpec<F extends Flags = Flags> {
  /** As typed after `understudy` (`sync`, `writes`). */
  readonly name: string;
  /** Its line in `understudy --help`. */
  readonly summary: string;
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
  /** The command's own flags; the common ones (`COMMON_FLAGS`) are added to every command. */
  readonly flags: F;
  /** Subcommands, each checked for its operands: the first operand names one (none: help on stderr, exit 2). */
  readonly subcommands?: Readonly<Record<string, SubcommandSpec>>;
  /** Text after the options (and subcommands): examples, exit codes. */
  readonly footer?: string;
}

/** Declares a command, keeping its flags' literal types (so `values.full` is a boolean, `values.tenant` a list). */
export const defineCommand = <const F extends Flags>(spec: CommandSpec<F>): CommandSpec<F> => spec;

/** The flags every command takes, added by the parser: `--quiet`, `--env-file`, `--help` (see `applyCommonFlags`). */
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

/** The flags many commands take, declared once; a command takes one with `shared(name, { help, required })`. */
export const SHARED_FLAGS = {
  config: { type: 'string', value: 'FILE', help: 'JSON config' },
  db: {
    type: 'string',
    value: 'FILE|URL',
    help: "the mirror: a SQLite file (a relative path from the current directory) or a postgres:// URL (default: the config's database, else $UNDERSTUDY_DB, else ./data/understudy.db)",
  },
  json: { type: 'boolean', help: 'machine-readable output' },
} as const satisfies Flags;

type Override = Partial<Pick<FlagSpec, 'help' | 'value' | 'required'>>;

/** A shared flag as one command takes it: what it means there (`help`), and whether it is `required`. */
export function shared<N extends keyof typeof SHARED_FLAGS, const O extends Override = Record<never, never>>(
  name: N,
  over?: O,
): Omit<(typeof SHARED_FLAGS)[N], keyof O> & O {
  return { ...SHARED_FLAGS[name], ...over } as unknown as Omit<(typeof SHARED_FLAGS)[N], keyof O> & O;
}

type WithCommon<F extends Flags> = F & typeof COMMON_FLAGS;

function optionOf(name: string, spec: FlagSpec): Option {
  const value =
    spec.type === 'string' ? (spec.optionalValue ? ` [${spec.value ?? 'VALUE'}]` : ` <${spec.value ?? 'VALUE'}>`) : '';
  const opt = new Option(`${spec.short ? `-${spec.short}, ` : ''}--${name}${value}`, spec.help);
  if (spec.multiple) opt.argParser((v: string, prev: string[] | undefined) => [...(prev ?? []), v]);
  return opt;
}

/** Every flag a command takes: its own, then the common ones. */
export const flagsOf = (spec: CommandSpec): Flags => ({ ...spec.flags, ...COMMON_FLAGS });

/** The command as commander sees it: its usage, about and every flag (parsing and help both come from it). */
export function commandOf(spec: CommandSpec): Command {
  const cmd = new Command(`understudy ${spec.name}`)
    .usage(spec.usage ?? '[options]')
    .description(spec.about)
    .helpOption(false)
    .allowExcessArguments(true)
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({ writeOut: () => undefined, writeErr: () => undefined })
    .configureHelp({ helpWidth: 100 });
  for (const [name, flag] of Object.entries(flagsOf(spec))) cmd.addOption(optionOf(name, flag));
  return cmd;
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

/** What `parseFlags` read: the values, the operands, the subcommand, and whether help is to be shown. */
export interface Parsed<F extends Flags> {
  readonly values: FlagValues<WithCommon<F>>;
  readonly positionals: string[];
  /** The subcommand (a spec with `subcommands`), and the operands after it. */
  readonly subcommand: string | undefined;
  readonly args: string[];
  /** `asked` (`--help`: stdout, exit 0); `needed` (no subcommand: stderr, exit 2); else null. */
  readonly help: 'asked' | 'needed' | null;
}

function parseWithCommander(argv: readonly string[], spec: CommandSpec): Record<string, unknown> & { _args: string[] } {
  const cmd = commandOf(spec);
  try {
    cmd.parse(spec.words ? wordsAfterDashes(argv, flagsOf(spec)) : [...argv], { from: 'user' });
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
  return Object.assign(values, { _args: [...cmd.args] });
}

/** The subcommand named, as declared (an unknown one: exit 2, naming those there are). */
function subcommandOf(spec: CommandSpec, sub: string): SubcommandSpec {
  const subs = spec.subcommands ?? {};
  const declared = subs[sub];
  if (!declared) throw new UsageError(`unknown subcommand "${sub}" (${Object.keys(subs).join(', ')})`);
  return declared;
}

/** The subcommand's operands checked against its declaration (the wrong number: exit 2). */
function checkOperands(said: string, declared: SubcommandSpec, args: readonly string[], all: boolean): void {
  if (declared.operands === 'none' && args.length > 0) throw new UsageError(`${said} takes no arguments`);
  if (declared.operands === 'one' && args.length !== 1)
    throw new UsageError(`${said} takes one ${declared.operand ?? 'argument'}`);
  if (declared.operands === 'ids-or-all' && (all ? args.length > 0 : args.length === 0))
    throw new UsageError(`${said} takes job ids or --all`);
}

/** The first required flag missing, as a usage error naming the flag and its value (`--to DB is required`). */
function checkRequired(spec: CommandSpec, values: Record<string, unknown>): void {
  for (const [name, flag] of Object.entries(spec.flags))
    if (flag.required && !values[name]) throw new UsageError(`--${name} ${flag.value ?? 'VALUE'} is required`);
}

/**
 * Parses a command's argv against its declaration: its flags (errors are `UsageError`s, exit 2, with a suggestion for
 * a misspelt flag), its subcommand and the operands it takes, then its required flags; and applies the flags every
 * command shares (`applyCommonFlags`: the env file, LOG_LEVEL, `--quiet`). Values are keyed by flag name as declared
 * (`values['base-url']`). With help asked (or a subcommand missing) nothing else is checked.
 */
export function parseFlags<F extends Flags>(argv: readonly string[], spec: CommandSpec<F>): Parsed<F> {
  const { _args: positionals, ...values } = parseWithCommander(argv, spec);
  const [sub, ...args] = spec.subcommands ? positionals : [];
  if (positionals.length > 0 && spec.operands !== true && !spec.subcommands)
    throw new UsageError(`unexpected argument "${positionals[0]}" (see understudy ${spec.name} --help)`);
  const help = values.help ? 'asked' : spec.subcommands && sub === undefined ? 'needed' : null;
  if (!values.help) applyCommonFlags(values as { quiet?: boolean; json?: boolean; 'env-file'?: string });
  if (help === null) {
    const declared = sub === undefined ? undefined : subcommandOf(spec, sub);
    checkRequired(spec, values);
    if (declared) checkOperands(`${spec.name} ${sub}`, declared, args, values.all === true);
  }
  return { values: values as FlagValues<WithCommon<F>>, positionals, subcommand: sub, args, help };
}
