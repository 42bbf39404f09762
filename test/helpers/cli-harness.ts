import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';
import { type SimulatorOptions, startSimulator } from '../../src/sim/start-simulator.js';
import { runCli } from './run-cli.js';
import { tempDir } from './sync-harness.js';

/**
 * A simulator (limits off), a config file naming its first tenant (key in K, no Redis) and a mirror in a temporary
 * folder; `cli` runs the built CLI with that config. `write` rewrites the config with top-level or tenant extras.
 */
export async function cliHarness(simOpts: SimulatorOptions = {}, tenantExtra: object = {}) {
  const sim = await startSimulator({
    port: 0,
    records: 10,
    readLimit: 0,
    writeLimit: 0,
    maxLimit: 20,
    tenants: 1,
    ...simOpts,
  });
  onTestFinished(() => sim.close());
  const t = sim.tenants[0];
  if (!t) throw new Error('no tenant');
  const dir = tempDir();
  const config = join(dir, 'config.json');
  const database = join(dir, 'm.db');
  const write = (extra: object = {}) =>
    writeFileSync(
      config,
      JSON.stringify({
        baseUrl: sim.url,
        database,
        tenants: [{ slug: t.slug, apiKeyEnv: 'K', ...tenantExtra }],
        ...extra,
      }),
    );
  write();
  const env = { K: t.key, REDIS_URL: '', LOG_LEVEL: 'warn' };
  const cli = (...args: string[]) => runCli([...args, '--config', config], { env });
  return { sim, t, dir, config, database, env, cli, write };
}
