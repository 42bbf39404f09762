import { describe, expect, it } from 'vitest';
import { durationSeconds } from '../../src/vocabulary/duration.js';

describe('durationSeconds', () => {
  it.each([
    ['10s', 10],
    ['2m', 120],
    ['90s', 90],
    ['1m30s', 90],
    ['1.5s', 1.5],
    ['3600', 3600],
    ['1h30m', 5400],
    ['PT1M30S', 90],
  ])('reads %s as %d seconds', (text, seconds) => {
    expect(durationSeconds(text)).toBe(seconds);
  });

  it.each(['', 'soon', '10x', '1m-', 'PT', 'P', '-5s'])('gives null for %j', (text) => {
    expect(durationSeconds(text)).toBeNull();
  });
});
