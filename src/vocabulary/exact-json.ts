import { parse as parseLossless, stringify as stringifyLossless } from 'lossless-json';
import type { JsonValue } from './ids.js';

/**
 * An integer literal too long to be exact as a JS number (16 digits or more) where a value starts: after `:`, `[`
 * or `,`. A match inside a string only costs the slower parse, never a wrong value.
 */
const LONG_INTEGER = /[:[,]\s*-?\d{16,}(?![\d.eE])/;

/**
 * Every integer literal outside the safe range (beyond ±(2^53 − 1)) becomes `bigint`, 2^53 itself included, so a
 * number in the result is always one the text meant exactly; every other number stays a JS number.
 */
const parseNumber = (text: string): number | bigint =>
  /^-?\d+$/.test(text) && !Number.isSafeInteger(Number(text)) ? BigInt(text) : Number(text);

/**
 * Parses JSON text exactly (a page, a stored doc, a write body): integers beyond 2^53 (ids such as
 * 9007199254740993) come back as `bigint` instead of being rounded. Text without such a literal takes the native `JSON.parse` (the lossless parser is several times
 * slower, so only the pages that need it pay: see docs/benchmarks.md).
 */
export function parseExactJson(text: string): JsonValue {
  if (!LONG_INTEGER.test(text)) return JSON.parse(text) as JsonValue;
  return parseLossless(text, null, parseNumber) as JsonValue;
}

/** A number of JSON text as it is written there (`1e400`, `-0.5`), before anything reads it as a number. */
export class NumberLiteral {
  constructor(readonly text: string) {}
}

/**
 * Parses JSON text keeping every number as a `NumberLiteral`: for a check that must see a number as written, e.g.
 * one a double cannot hold, which any reading has already turned into Infinity or 0. A duplicate key keeps its last
 * value, as `JSON.parse` does.
 */
export const parseKeepingLiterals = (text: string): unknown =>
  parseLossless(text, null, {
    parseNumber: (t: string) => new NumberLiteral(t),
    onDuplicateKey: ({ newValue }: { newValue: unknown }) => newValue,
  });

/** JSON text of a value that may hold `bigint`s (written as bare integers, exactly as received). */
export function stringifyJson(value: JsonValue): string {
  try {
    return JSON.stringify(value);
  } catch (err) {
    if (!(err instanceof TypeError)) throw err;
    return stringifyLossless(value) as string;
  }
}
