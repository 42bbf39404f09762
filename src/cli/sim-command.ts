import { UsageError } from '../errors.js';
import { startSimulator } from '../sim/start-simulator.js';
import { printHelp } from './command-help.js';
import { parseFlags } from './parse-flags.js';
import { SIM_SPEC } from './specs/sim-spec.js';
import { stopped, untilStopped } from './stop-signal.js';

const intFlag = (name: string, v: string | undefined, min: number): number | undefined => {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v) || Number(v) < min) throw new UsageError(`--${name} must be an integer >= ${min}, got "${v}"`);
  return Number(v);
};

/** `understudy sim`: prints the base URL and one `tenant <slug> key <KEY>` line per tenant, then serves. */
export async function simCommand(argv: string[]): Promise<number> {
  const { values, help } = parseFlags(argv, SIM_SPEC);
  if (help) return printHelp(SIM_SPEC, help);
  const routes = values.routes ?? 'full';
  if (routes !== 'documented' && routes !== 'full')
    throw new UsageError(`--routes must be "documented" or "full", got "${routes}"`);
  const keys: Record<string, string> = {};
  for (const k of values.key ?? []) {
    const m = /^([a-z0-9-]+)=([A-Za-z0-9_-]{8,})$/.exec(k);
    if (!m) throw new UsageError('--key must be TENANT=KEY (KEY: 8+ characters of A-Z a-z 0-9 _ -)');
    keys[m[1] as string] = m[2] as string;
  }
  const opts = {
    port: intFlag('port', values.port, 0),
    host: values.host,
    seed: intFlag('seed', values.seed, 0),
    tenants: intFlag('tenants', values.tenants, 1),
    records: intFlag('records', values.records, 1),
    readLimit: intFlag('read-limit', values['read-limit'], 0),
    writeLimit: intFlag('write-limit', values['write-limit'], 0),
    windowMs: intFlag('window-ms', values['window-ms'], 1),
    maxLimit: intFlag('max-limit', values['max-limit'], 0),
  };
  if (opts.port !== undefined && opts.port > 65535) throw new UsageError('--port must be at most 65535');
  const defined = Object.fromEntries(Object.entries(opts).filter(([, v]) => v !== undefined));
  const sim = await startSimulator({
    ...defined,
    routes,
    keys,
    ...(values.today ? { aroundDay: Date.now() } : {}),
    ...(values['updates-onto-latest'] ? { updatesOntoLatest: true } : {}),
  });
  const unknown = Object.keys(keys).filter((slug) => !sim.tenants.some((t) => t.slug === slug));
  if (unknown.length) {
    await sim.close();
    throw new UsageError(`--key names unknown tenant(s): ${unknown.join(', ')}`);
  }
  if (!values.quiet) {
    process.stdout.write(`simulator listening on ${sim.url}\n`);
    for (const t of sim.tenants) process.stdout.write(`tenant ${t.slug} key ${t.key}\n`);
  }
  await untilStopped(async (stop) => {
    await stopped(stop);
    await sim.close();
  });
  return 0;
}
