import type * as v from 'valibot';
import { didYouMean } from './did-you-mean.js';

type Schema = v.GenericSchema;
type Issue = v.BaseIssue<unknown>;

/** The schema inside optional and nullable wrappers, and the object or list option of a union (`watch`). */
function unwrap(x: Schema): Schema {
  let cur = x;
  for (;;) {
    if ('wrapped' in cur && cur.wrapped) cur = cur.wrapped as Schema;
    else if (cur.type === 'union' && 'options' in cur) {
      const nested = (cur.options as Schema[]).find((o) => 'entries' in unwrap(o) || 'item' in unwrap(o));
      if (!nested) return cur;
      cur = nested;
    } else return cur;
  }
}

/** The schema that checks the value at `keys` below `schema` (through wrappers, unions, arrays and objects). */
function schemaAt(schema: Schema, keys: readonly (string | number)[]): Schema | null {
  let s: Schema | undefined = schema;
  for (const key of keys) {
    if (!s) return null;
    s = unwrap(s);
    if ('entries' in s && typeof key === 'string') s = (s.entries as Record<string, Schema>)[key];
    else if ('item' in s) s = s.item as Schema;
    else return null;
  }
  return s ? unwrap(s) : null;
}

/**
 * The issues to show for one valibot issue. A union (`watch`: a boolean or an object of knobs) reports one issue
 * holding each option's issues; when the value fits an option's type and fails inside it (an unknown knob, a bad
 * share), those inner issues, at their full paths, say more than "must be true, false or an object".
 */
export function leafIssues(issue: Issue): Issue[] {
  if (issue.type !== 'union' || !issue.issues) return [issue];
  // An option's issue without a path of its own is "not this option's type": not what went wrong inside one.
  const inner = issue.issues.filter((sub) => (sub.path?.length ?? 0) > 0);
  if (inner.length === 0) return [issue];
  return inner.flatMap((sub) => leafIssues({ ...sub, path: [...(issue.path ?? []), ...(sub.path ?? [])] } as Issue));
}

const kindOf = (value: unknown): string => {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'an object';
  return `a ${typeof value}`;
};

const TYPE_WORDS: Readonly<Record<string, string>> = {
  string: 'a string',
  number: 'a number',
  boolean: 'true or false',
  array: 'a list ([…])',
  object: 'an object ({…})',
  strict_object: 'an object ({…})',
};

/**
 * One valibot issue in plain words, without valibot's vocabulary ("Expected never but received …"): `unknown key
 * "apikeyEnv" (did you mean "apiKeyEnv"?)`, `missing (required)`, `must be a number (got a string)`. Values are
 * never echoed where they could be a secret (anything under `apiKeyEnv`): such a field's own message is used.
 */
export function describeIssue(issue: Issue, root: Schema): { path: string; text: string } {
  const keys = (issue.path ?? []).map((p) => p.key as string | number);
  const dot = keys.join('.');
  const parent = keys.slice(0, -1).join('.');
  const last = keys[keys.length - 1];
  const custom = !issue.message.startsWith('Invalid ');
  if (issue.type === 'strict_object' && issue.expected === 'never' && typeof last === 'string') {
    const owner = schemaAt(root, keys.slice(0, -1));
    const known = owner && 'entries' in owner ? Object.keys(owner.entries as object) : [];
    return { path: parent || '(top level)', text: `unknown key "${last}"${didYouMean(last, known)}` };
  }
  if (issue.kind === 'schema' && issue.received === 'undefined' && issue.input === undefined)
    return { path: dot, text: 'missing (required)' };
  if (custom) return { path: dot, text: issue.message };
  if (issue.type === 'picklist') {
    const options = ((schemaAt(root, keys) as { options?: unknown[] } | null)?.options ?? []).map(String);
    const given = typeof issue.input === 'string' ? issue.input : '';
    const list = options.length > 6 ? `${options.slice(0, 6).join(', ')} …` : options.join(', ');
    return { path: dot, text: `"${given}" is not one of ${list}${didYouMean(given, options)}` };
  }
  if (issue.kind === 'schema') {
    const want = TYPE_WORDS[issue.type] ?? issue.expected ?? issue.type;
    return { path: dot, text: `must be ${want} (got ${kindOf(issue.input)})` };
  }
  const req = (issue as { requirement?: unknown }).requirement;
  switch (issue.type) {
    case 'min_value':
      return { path: dot, text: `must be at least ${String(req)} (got ${String(issue.input)})` };
    case 'gt_value':
      return { path: dot, text: `must be above ${String(req)} (got ${String(issue.input)})` };
    case 'max_value':
      return { path: dot, text: `must be at most ${String(req)} (got ${String(issue.input)})` };
    case 'integer':
      return { path: dot, text: `must be a whole number (got ${String(issue.input)})` };
    case 'min_length':
      return { path: dot, text: req === 1 ? 'must not be empty' : `must have at least ${String(req)} items` };
    default:
      return { path: dot, text: issue.message.replace(/^Invalid \w+: /, '') };
  }
}

/**
 * Where a JSON syntax error is, as `line:column` (1-based), from the position in `JSON.parse`'s message (Node 20
 * says only "at position N"); null when the message gives none (e.g. the text ends early: then its last line).
 */
export function jsonErrorLocation(text: string, message: string): { line: number; column: number } {
  const m = /at position (\d+)/.exec(message);
  const pos = m ? Math.min(Number(m[1]), text.length) : text.length;
  const before = text.slice(0, pos).split('\n');
  return { line: before.length, column: (before[before.length - 1]?.length ?? 0) + 1 };
}

/** `JSON.parse`'s message without the position (given as line and column instead). */
export const jsonErrorWords = (message: string): string =>
  message
    .replace(/\s*in JSON at position \d+(\s*\(line \d+ column \d+\))?/, '')
    .replace(/^Unexpected end of JSON input$/, 'the text ends too early (a missing } or ])');
