import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { RouteSet } from '../../src/vocabulary/collections.js';
import { openSim } from './sim-helpers.js';

/** The served description, byte for byte: a digest of `/partners/openapi` for each seed and route set the tests use. */
const digest = async (seed: number, routes: RouteSet): Promise<string> => {
  const api = await openSim({ seed, routes });
  const r = await fetch(`${api.sim.url}/partners/openapi`);
  const text = await r.text();
  const again = await fetch(`${api.sim.url}/partners/2026-02/openapi`);
  expect(await again.text()).toBe(text);
  return createHash('sha256').update(text).digest('hex');
};

describe('simulator OpenAPI document', () => {
  it.each([
    [1, 'full', '775dc03fd5dede917e49efd3b360c41dfa935e4412c88125bb6c725f48cb4f95'],
    [1, 'documented', '805c2f5d9e8c58da2279b6c297bc4e9e180ab1d47f02b8a23e31d7e2ab1c3ec3'],
    [7, 'full', 'cfba043f09d6c580e21cb730354f4cdf8554f9ca453171e38367313a682e712c'],
    [7, 'documented', 'cd7f6bb2e83141d6c863930ca0af75a9afb4ff7c20188bf8d8e1ab493d3ac476'],
  ] as const)('is unchanged for seed %i and the %s route set', async (seed, routes, sha256) => {
    expect(await digest(seed, routes)).toBe(sha256);
  });
});
