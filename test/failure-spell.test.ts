import { describe, expect, it } from 'vitest';
import { failureSpell } from '../src/failure-spell.js';

describe('failure spell', () => {
  it('is news at its first failure and at each change of cause, counts repeats, and ends once at a success', () => {
    let now = 1000;
    const spell = failureSpell(() => now);
    expect(spell.succeeded()).toBeNull();
    expect(spell.failed('HTTP 503')).toEqual({ cause: 'HTTP 503', failuresBefore: 0 });
    now = 3000;
    expect(spell.failed('HTTP 503')).toBeNull();
    expect(spell.failed('HTTP 503')).toBeNull();
    expect(spell.failed('ECONNREFUSED at 127.0.0.1:4010')).toEqual({
      cause: 'ECONNREFUSED at 127.0.0.1:4010',
      previousCause: 'HTTP 503',
      failuresBefore: 3,
    });
    expect(spell.failed('ECONNREFUSED at 127.0.0.1:4010')).toBeNull();
    now = 41_000;
    expect(spell.succeeded()).toEqual({ failures: 5, ms: 40_000, cause: 'ECONNREFUSED at 127.0.0.1:4010' });
    // Ended: a success says nothing more, and the next failure opens a new spell.
    expect(spell.succeeded()).toBeNull();
    expect(spell.failed('HTTP 503')).toEqual({ cause: 'HTTP 503', failuresBefore: 0 });
  });
});
