import { describe, expect, it } from 'vitest';
import { helpText } from '../../src/cli/command-help.js';
import { defineCommand, leadingCommonFlags, parseFlags } from '../../src/cli/parse-flags.js';

const SPEC = defineCommand({
  name: 'try',
  summary: 'a command to parse',
  about: 'Parses.',
  flags: {
    limit: { type: 'int', min: 1, max: 1000, default: 20, value: 'N', help: 'at most N' },
    since: { type: 'int', min: 0, value: 'SEQ', help: 'after SEQ' },
    timeout: { type: 'number', min: 0, above: true, max: 100, unit: 'seconds', value: 'S', help: 'stop after S' },
    kind: { type: 'choice', values: ['insert', 'delete'], multiple: true, value: 'KIND', help: 'only these' },
    json: { type: 'boolean', conflicts: ['nl'], help: 'JSON' },
    nl: { type: 'boolean', help: 'lines' },
    http: { type: 'int', min: 0, max: 65535, value: 'PORT', help: 'ops port' },
    'http-host': { type: 'string', requires: ['http'], value: 'HOST', help: 'ops host' },
  },
});

const parse = (...argv: string[]) => parseFlags(argv, SPEC).values;
const refusal = (...argv: string[]) => {
  try {
    parseFlags(argv, SPEC);
  } catch (err) {
    return { code: (err as { code?: string }).code, message: (err as Error).message };
  }
  throw new Error(`${argv.join(' ')} was not refused`);
};

describe('flags declared whole', () => {
  it('gives the command typed values, and the defaults of the flags not given', () => {
    const v = parse('--since', '7', '--timeout', '0.5', '--kind', 'delete', '--kind', 'insert', '--http', '0');
    expect(v).toMatchObject({ limit: 20, since: 7, timeout: 0.5, kind: ['delete', 'insert'], http: 0 });
    expect(parse('--limit=1000').limit).toBe(1000);
    expect(parse().since).toBeUndefined();
  });

  it('refuses a value out of its declaration with one usage line naming the flag and the value', () => {
    expect(refusal('--limit', '0')).toEqual({
      code: 'US_USAGE',
      message: '--limit 0: must be an integer from 1 to 1000',
    });
    expect(refusal('--limit', '2.5').message).toBe('--limit 2.5: must be an integer from 1 to 1000');
    expect(refusal('--since', '-1').message).toBe('--since -1: must be an integer >= 0');
    expect(refusal('--timeout', '0').message).toBe('--timeout 0: must be a number of seconds > 0 (at most 100)');
    expect(refusal('--timeout', 'soon').message).toBe('--timeout soon: must be a number of seconds > 0 (at most 100)');
    expect(refusal('--kind', 'insert', '--kind', 'moved').message).toBe('--kind moved: must be one of insert, delete');
    expect(refusal('--http', '70000').message).toBe('--http 70000: must be an integer from 0 to 65535');
  });

  it('refuses flags that do not go together, and one given without the flag it needs', () => {
    expect(refusal('--json', '--nl')).toEqual({ code: 'US_USAGE', message: 'give --json or --nl, not both' });
    expect(refusal('--http-host', '0.0.0.0').message).toBe('--http-host needs --http PORT');
    expect(parse('--http-host', '0.0.0.0', '--http', '9000')).toMatchObject({ http: 9000, 'http-host': '0.0.0.0' });
  });

  it('shows the defaults in help from the same declaration', () => {
    expect(helpText(SPEC)).toMatch(/--limit <N>\s+at most N \(default 20\)/);
    expect(helpText(SPEC)).not.toMatch(/--since <SEQ>.*default/);
  });

  it('passes the common flags given before the command on to it, as declared', () => {
    expect(leadingCommonFlags(['-q', '--env-file', 'e.env', 'sync', '--full'])).toEqual({
      leading: ['-q', '--env-file', 'e.env'],
      rest: ['sync', '--full'],
    });
    expect(leadingCommonFlags(['--env-file=e.env', '--quiet', 'status'])).toEqual({
      leading: ['--env-file=e.env', '--quiet'],
      rest: ['status'],
    });
    expect(leadingCommonFlags(['--help', 'sync'])).toEqual({ leading: [], rest: ['--help', 'sync'] });
    expect(leadingCommonFlags(['--env-file'])).toEqual({ leading: [], rest: ['--env-file'] });
  });
});
