import { describe, expect, it } from 'vitest';
import { closestMatch, didYouMean } from '../../src/config/did-you-mean.js';

describe('did you mean', () => {
  it('finds a typo, a case slip, a transposition and a prefix', () => {
    expect(closestMatch('apikeyEnv', ['apiKeyEnv', 'slug', 'collections'])).toBe('apiKeyEnv');
    expect(closestMatch('synk', ['sim', 'sync', 'status', 'sql'])).toBe('sync');
    expect(closestMatch('colletcion', ['collection', 'config'])).toBe('collection');
    expect(closestMatch('warning', ['debug', 'info', 'warn', 'error'])).toBe('warn');
  });

  it('suggests nothing for a word too far from every candidate', () => {
    expect(closestMatch('colour', ['slug', 'apiKeyEnv', 'drafts'])).toBeUndefined();
    expect(didYouMean('zzz', ['sync'])).toBe('');
    expect(didYouMean('statsu', ['status'])).toBe(' (did you mean "status"?)');
  });
});
