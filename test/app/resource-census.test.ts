import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import { startSimulator } from '../../src/sim/start-simulator.js';
import { fdsOn, type PoolCensus, poolCensusEnv, readPoolCensus } from '../helpers/resource-census.js';
import { tempDir } from './worker-harness.js';

const dist = (path: string) => new URL(`../../dist/src/${path}`, import.meta.url).href;
const root = fileURLToPath(new URL('../../', import.meta.url));

/**
 * A process built on `createApp` (profile sync), as a command is: it reads one page through the app's client, then
 * does the one `extra` thing it is told (nothing; a second handle on the mirror; a second pool; a request outside
 * any pool), says `ready`, and exits when its stdin ends.
 */
const PROCESS = `
import { createRequire } from 'node:module';
const { createApp } = await import(${JSON.stringify(dist('app/create-app.js'))});
const { parseConfig } = await import(${JSON.stringify(dist('config/load-config.js'))});
const { createLogger } = await import(${JSON.stringify(dist('log.js'))});
const { openMirror } = await import(${JSON.stringify(dist('store/open-mirror.js'))});
const { Agent, request } = createRequire(${JSON.stringify(join(root, 'package.json'))})('undici');
const [simUrl, slug, key, db, extra] = process.argv.slice(1);
const app = await createApp(parseConfig({ baseUrl: simUrl, tenants: [{ slug, apiKeyEnv: 'K' }] }), { K: key }, {
  profile: 'sync', log: createLogger({ level: 'silent' }), database: db, gates: 'memory',
});
await app.tenants()[0].client.listPage({ collection: 'series', limit: 1 }, { signal: AbortSignal.timeout(10000) });
const url = simUrl + '/partners/2026-02/' + slug + '/series?limit=1';
const headers = { authorization: 'users API-Key ' + key };
let second = null;
let agent = null;
if (extra === 'handle') second = await openMirror(db);
if (extra === 'pool') { agent = new Agent(); await (await request(url, { dispatcher: agent, headers })).body.dump(); }
if (extra === 'fetch') await (await fetch(url, { headers })).arrayBuffer();
process.stdout.write('ready\\n');
process.stdin.resume();
process.stdin.on('end', async () => {
  await second?.close();
  await agent?.close();
  await app.close();
});
`;

async function census(extra: 'none' | 'handle' | 'pool' | 'fetch'): Promise<{ fds: number; census: PoolCensus }> {
  const sim = await startSimulator({ port: 0, readLimit: 0, writeLimit: 0, records: 4, tenants: 1 });
  onTestFinished(() => sim.close());
  const t = sim.tenants[0];
  if (!t) throw new Error('simulator has no tenant');
  const dir = tempDir();
  const db = join(dir, 'mirror.db');
  const file = join(dir, 'census.json');
  const child = spawn(process.execPath, ['--input-type=module', '-e', PROCESS, sim.url, t.slug, t.key, db, extra], {
    env: { ...process.env, ...poolCensusEnv(file) },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  onTestFinished(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  let out = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('ready')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`child exited ${code} before it was ready`)));
  });
  const fds = fdsOn(child.pid as number, '/mirror.db');
  const exited = once(child, 'exit');
  child.stdin.end();
  const [code] = await exited;
  expect(code).toBe(0);
  return { fds, census: readPoolCensus(file) };
}

// The one-handle test counts handles and pools this way: here it is shown to notice a second one.
describe.runIf(process.platform === 'linux')('the one-handle detectors', () => {
  it('count one handle and one pool in a process built on createApp', async () => {
    const { fds, census: c } = await census('none');
    expect(fds).toBe(1);
    expect(c).toMatchObject({ pools: 1 });
    expect(c.requests).toBe(c.pooled);
  });

  it('notice a second handle on the mirror', async () => {
    expect((await census('handle')).fds).toBe(2);
  });

  it('notice a second HTTP pool', async () => {
    expect((await census('pool')).census.pools).toBe(2);
  });

  it("notice a request sent through a pool that is not the app's (fetch: the global dispatcher)", async () => {
    const { census: c } = await census('fetch');
    // Node's fetch goes through undici's global Agent when undici is loaded, else past every Agent.
    expect(c.pools > 1 || c.requests > c.pooled, JSON.stringify(c)).toBe(true);
  });
});
