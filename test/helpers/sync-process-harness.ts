import { join } from 'node:path';
import { onTestFinished } from 'vitest';
import { type SimulatorOptions, startSimulator } from '../../src/sim/start-simulator.js';
import type { CollectionSlug } from '../../src/vocabulary/collections.js';
import { runCli } from './run-cli.js';
import { tempDir } from './sync-harness.js';
import { startSync } from './understudy-process.js';

/**
 * A simulator (limits off, one tenant), a fresh SQLite mirror, and `understudy sync` of one collection of that
 * tenant into it, set by flags (no config file) with `--json`: `run(...flags)` to its end, `start(...flags)` in the
 * background. Runs the built CLI: `npm run build` first (`npm test` does).
 */
export async function syncProcessHarness(collection: CollectionSlug, simOpts: SimulatorOptions = {}) {
  const sim = await startSimulator({ port: 0, readLimit: 0, writeLimit: 0, tenants: 1, ...simOpts });
  onTestFinished(() => sim.close());
  const t = sim.tenants[0];
  if (!t) throw new Error('no tenant');
  const db = join(tempDir(), 'mirror.db');
  const env = { PARTNERS_API_KEY: t.key, LOG_LEVEL: 'warn' };
  const argv = (flags: readonly string[]) => [
    '--base-url',
    sim.url,
    '--tenant',
    t.slug,
    '--db',
    db,
    '--collection',
    collection,
    '--json',
    ...flags,
  ];
  return {
    sim,
    t,
    db,
    env,
    run: (...flags: string[]) => runCli(['sync', ...argv(flags)], { env }),
    start: (...flags: string[]) => startSync(argv(flags), env),
  };
}
