import { Command, CommanderError, Option } from 'commander';
import { UsageError } from '../errors.js';
import { applyCommonFlags } from './command-env.js';

/**
 * One flag, declared once: its parsing, its line of help and its "did you mean" all come from this. Commander
 * (`commander` on npm) does the parsing and the help: the parser gh-, cargo- and npm-style CLIs in Node use, with
 * suggestions for unknown flags, `--flag=value`, `--` and clustered short flags, so none of it is written here.
 */
export interface FlagSpec {
  /**
   * `string` and `boolean` as given; `int` an integer, `number` any number (seconds: `0.5`), each within `min` and
   * `max`; `choice` one of `values`. The parser checks each (a usage error naming the flag and its value, exit 2) and
   * the command receives it typed.
   */
  readonly type: 'string' | 'boolean' | 'int' | 'number' | 'choice';
  /** `int`, `number`: the least value allowed (with `above`: the value must be more than it). */
  readonly min?: number;
  readonly above?: boolean;
  /** `int`, `number`: the most value allowed. */
  readonly max?: number;
  /** What a number counts, in its error (`seconds`: "must be a number of seconds > 0"). */
  readonly unit?: string;
  /** `choice`: the values allowed. */
  readonly values?: readonly string[];
  /** The value when the flag is not given: the command always receives one, and help shows it. */
  readonly default?: number | string;
  /** Flags it does not go with: giving both is a usage error (exit 2). */
  readonly conflicts?: readonly string[];
  /** Flags it needs: giving it without them is a usage error (exit 2). */
  readonly requires?: readonly string[];
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

type ScalarOf<S extends FlagSpec> = S extends { type: 'int' | 'number' }
  ? number
  : S extends { type: 'choice'; values: readonly (infer V)[] }
    ? V
    : string;

type ValueOf<S extends FlagSpec> = S extends { type: 'boolean' }
  ? boolean
  : S extends { multiple: true }
    ? ScalarOf<S>[]
    : S extends { optionalValue: true }
      ? ScalarOf<S> | true
      : ScalarOf<S>;

/** The flags always there: the required ones and those with a default. */
type RequiredOf<F extends Flags> = {
  [K in keyof F]: F[K] extends { required: true } ? K : F[K] extends { default: number | string } ? K : never;
}[keyof F];

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

type Override = Partial<Pick<FlagSpec, 'help' | 'value' | 'required' | 'conflicts'>>;

/** A shared flag as one command takes it: what it means there (`help`), whether it is `required`, what it `conflicts` with. */
export function shared<N extends keyof typeof SHARED_FLAGS, const O extends Override = Record<never, never>>(
  name: N,
  over?: O,
): Omit<(typeof SHARED_FLAGS)[N], keyof O> & O {
  return { ...SHARED_FLAGS[name], ...over } as unknown as Omit<(typeof SHARED_FLAGS)[N], keyof O> & O;
}

type WithCommon<F extends Flags> = F & typeof COMMON_FLAGS;

function optionOf(name: string, spec: FlagSpec): Option {
  const value =
    spec.type !== 'boolean' ? (spec.optionalValue ? ` [${spec.value ?? 'VALUE'}]` : ` <${spec.value ?? 'VALUE'}>`) : '';
  const help = spec.default === undefined ? spec.help : `${spec.help} (default ${spec.default})`;
  const opt = new Option(`${spec.short ? `-${spec.short}, ` : ''}--${name}${value}`, help);
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
      const takesNext = flag.type !== 'boolean' && eq < 0 && next !== undefined;
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

/** What a typed flag's value must be, as its error says it: `an integer from 1 to 1000`, `one of a, b`. */
function expected(flag: FlagSpec): string {
  if (flag.type === 'choice') return `one of ${(flag.values ?? []).join(', ')}`;
  const what = flag.type === 'int' ? 'an integer' : `a number${flag.unit ? ` of ${flag.unit}` : ''}`;
  const { min, max } = flag;
  if (min !== undefined && max !== undefined && !flag.above) return `${what} from ${min} to ${max}`;
  const least = min === undefined ? '' : ` ${flag.above ? '>' : '>='} ${min}`;
  return `${what}${least}${max === undefined ? '' : min === undefined ? ` <= ${max}` : ` (at most ${max})`}`;
}

/** One value of a typed flag, checked against its declaration (`--limit 0: must be an integer from 1 to 1000`). */
function typedValue(name: string, flag: FlagSpec, text: string): number | string {
  if (flag.type === 'choice') {
    if (flag.values?.includes(text)) return text;
    throw new UsageError(`--${name} ${text}: must be ${expected(flag)}`);
  }
  const n = Number(text);
  const shaped =
    flag.type === 'int' ? /^-?\d+$/.test(text) && Number.isSafeInteger(n) : text.trim() !== '' && Number.isFinite(n);
  const low = flag.min !== undefined && (flag.above ? n <= flag.min : n < flag.min);
  if (!shaped || low || (flag.max !== undefined && n > flag.max))
    throw new UsageError(`--${name} ${text}: must be ${expected(flag)}`);
  return n;
}

const given = (v: unknown): boolean => v !== undefined && v !== false && v !== '';

/** The flags given together that do not go together, or one given without one it needs: a usage error (exit 2). */
function checkRelations(flags: Flags, values: Record<string, unknown>): void {
  for (const [name, flag] of Object.entries(flags)) {
    if (!given(values[name])) continue;
    const other = flag.conflicts?.find((c) => given(values[c]));
    if (other) throw new UsageError(`give --${name} or --${other}, not both`);
    const missing = flag.requires?.find((r) => !given(values[r]));
    const needed = flags[missing ?? ''];
    if (missing)
      throw new UsageError(
        `--${name} needs --${missing}${needed?.type === 'boolean' ? '' : ` ${needed?.value ?? 'VALUE'}`}`,
      );
  }
}

/** The values typed as declared (`int`, `number`, `choice`), and the defaults of the flags not given. */
function typeValues(flags: Flags, values: Record<string, unknown>): void {
  for (const [name, flag] of Object.entries(flags)) {
    const v = values[name];
    if (v === undefined) {
      if (flag.default !== undefined) values[name] = flag.default;
    } else if (flag.type === 'int' || flag.type === 'number' || flag.type === 'choice') {
      const one = (x: unknown) => (typeof x === 'string' ? typedValue(name, flag, x) : x);
      values[name] = Array.isArray(v) ? v.map(one) : one(v);
    }
  }
}

/**
 * The flags every command takes, given before the command (`understudy --quiet sync …`), by their declaration
 * (`COMMON_FLAGS`, but `--help`: that one is the program's): they are passed on to the command, which parses them.
 * Returns them and the rest of argv, from the command's name on.
 */
export function leadingCommonFlags(argv: readonly string[]): { leading: string[]; rest: string[] } {
  const leading: string[] = [];
  let at = 0;
  for (; at < argv.length; at++) {
    const a = argv[at] as string;
    const flag = Object.entries(COMMON_FLAGS).find(
      ([name, f]) =>
        name !== 'help' &&
        (a === `--${name}` ||
          ('short' in f && a === `-${f.short}`) ||
          (f.type !== 'boolean' && a.startsWith(`--${name}=`))),
    )?.[1];
    if (!flag) break;
    if (flag.type === 'boolean' || a.includes('=')) leading.push(a);
    else if (at + 1 < argv.length) leading.push(a, argv[++at] as string);
    else break;
  }
  return { leading, rest: argv.slice(at) };
}

/**
 * Parses a command's argv against its declaration: its flags (errors are `UsageError`s, exit 2, with a suggestion for
 * a misspelt flag), its subcommand and the operands it takes, then its required flags; and applies the flags every
 * command shares (`applyCommonFlags`: the env file, LOG_LEVEL, `--quiet`). Values are keyed by flag name as declared
 * (`values['base-url']`), typed as declared (`int`, `number`, `choice`; a default when not given); flags that do not go
 * together (`conflicts`) or need another (`requires`) are refused. With help asked (or a subcommand missing) nothing
 * else is checked.
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
    checkRelations(spec.flags, values);
    typeValues(spec.flags, values);
  }
  return { values: values as FlagValues<WithCommon<F>>, positionals, subcommand: sub, args, help };
}
