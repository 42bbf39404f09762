import { describe, expect, it } from 'vitest';
import { inWords, parseDuration } from '../../src/cli/parse-duration.js';

describe('durations', () => {
  it.each([
    ['3600', 3600],
    ['90s', 90],
    ['15m', 900],
    ['15min', 900],
    ['2h', 7200],
    ['1d', 86_400],
    ['1h30m', 5400],
    ['PT1H30M', 5400],
    ['pt45s', 45],
    ['P1D', 86_400],
  ])('reads %s as %i seconds', (text, seconds) => {
    expect(parseDuration(text, '--max-age')).toBe(seconds);
  });

  it.each(['', 'soon', '5 parsecs', 'PT', '1h-', 'P'])('refuses %j naming the flag', (text) => {
    expect(() => parseDuration(text, '--max-age')).toThrow(/--max-age .*not a duration/);
  });

  it('says a wait in words: seconds, minutes, then hours and minutes', () => {
    expect(inWords(40_000)).toBe('in 40 s');
    expect(inWords(12 * 60_000)).toBe('in 12 min');
    expect(inWords((6 * 60 + 9) * 60_000)).toBe('in 6 h 09 min');
  });
});
