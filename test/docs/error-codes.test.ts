import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EXIT, exitCodeOf } from '../../src/cli/exit-codes.js';

/**
 * docs/errors.md and the `ErrorCode` union say the same: every code of the union has a row in the table of codes
 * with the exit code `exit-codes.ts` maps it to, and the table has no row for a code the union lacks.
 */
const md = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
const source = readFileSync(new URL('../../src/errors.ts', import.meta.url), 'utf8');

const union = (): string[] => {
  const body = /export type ErrorCode =([\s\S]*?);/.exec(source)?.[1] ?? '';
  return [...body.matchAll(/'(US_[A-Z_]+)'/g)].map((m) => m[1] as string);
};

/** The rows `| `US_X` | <exit> | …` of the table of codes (not the warnings' table, which has no exit column). */
const rows = (): Map<string, number> =>
  new Map([...md.matchAll(/^\| `(US_[A-Z_]+)` \| (\d+) \|/gm)].map((m) => [m[1] as string, Number(m[2])]));

describe('docs/errors.md and the ErrorCode union', () => {
  it('has one row per code of the union, with the exit code the CLI gives it', () => {
    const codes = union();
    expect(codes.length).toBeGreaterThan(10);
    const table = rows();
    for (const code of codes) {
      expect(table.has(code), `docs/errors.md has no row for ${code}`).toBe(true);
      expect(table.get(code), `${code}: exit code in docs/errors.md`).toBe(exitCodeOf(code));
    }
    expect([...table.keys()].filter((c) => !codes.includes(c))).toEqual([]);
    expect(exitCodeOf('US_NO_SUCH_CODE')).toBe(EXIT.FAILURE);
  });
});
