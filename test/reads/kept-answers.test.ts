import { describe, expect, it } from 'vitest';
import { KeptAnswers } from '../../src/reads/kept-answers.js';
import type { ReadAnswer } from '../../src/reads/read-answer.js';

// Which reads are kept: only one asked before (a read asked once is mostly never asked again), only a whole answer,
// only under the mark it was read after, and "asked before" forgets reads asked long ago.

const answer = (body: string, status = 200): ReadAnswer => ({ status, headers: {}, body });

describe('kept answers', () => {
  it('keeps the answer of a read asked before, and gives it until the mark moves', () => {
    const kept = new KeptAnswers();
    expect(kept.get('1', 'a')).toBeUndefined();
    kept.set('1', 'a', answer('first'));
    expect(kept.get('1', 'a')).toBeUndefined();
    kept.set('1', 'a', answer('second'));
    expect(kept.get('1', 'a')?.body).toBe('second');
    // The mark moved: nothing is given; the read asked before is kept again at its next answer.
    expect(kept.get('2', 'a')).toBeUndefined();
    kept.set('2', 'a', answer('third'));
    expect(kept.get('2', 'a')?.body).toBe('third');
  });

  it('keeps no answer of a mark that has moved, and no failure', () => {
    const kept = new KeptAnswers();
    kept.set('1', 'a', answer('x'));
    kept.set('1', 'b', answer('x'));
    expect(kept.get('2', 'b')).toBeUndefined(); // a read of the newer mark came first
    kept.set('1', 'a', answer('of the old mark'));
    expect(kept.get('2', 'a')).toBeUndefined();
    kept.set('2', 'b', answer('problem', 503));
    kept.set('2', 'b', answer('problem', 503));
    expect(kept.get('2', 'b')).toBeUndefined();
    expect(kept.size).toBe(0);
  });

  it('forgets reads asked long ago: after 131,072 reads asked once, an early one is asked anew', () => {
    const kept = new KeptAnswers();
    kept.set('1', 'early', answer('x'));
    const n = 2 ** 17 + 2 ** 16;
    for (let i = 0; i < n; i++) kept.set('1', `once ${i}`, answer('x'));
    // A read taken for one asked before (its bit another's) is kept a read early: a few, never most.
    expect(kept.size).toBeLessThan(n / 16);
    kept.set('1', 'early', answer('y'));
    expect(kept.get('1', 'early')).toBeUndefined();
    kept.set('1', 'early', answer('z'));
    expect(kept.get('1', 'early')?.body).toBe('z');
  });
});
