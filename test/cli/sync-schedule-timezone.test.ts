import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { startSimulator } from '../../src/sim/start-simulator.js';
import { collect, spawnCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/sync-harness.js';

/** The hour of the day now in `timeZone`. */
const hourIn = (timeZone: string): number =>
  Number(new Intl.DateTimeFormat('en-GB', { timeZone, hour: '2-digit', hourCycle: 'h23' }).format(new Date()));

describe('understudy sync --schedule', () => {
  it("reads each tenant's ticks in its schedule.timezone", async () => {
    const sim = await startSimulator({ port: 0, readLimit: 0, writeLimit: 0, records: 4, tenants: 2 });
    onTestFinished(() => sim.close());
    const [east, utc] = sim.tenants;
    if (!east || !utc) throw new Error('two tenants expected');
    // Kiritimati is UTC+14: its hour and the next are never the current UTC hour or the next, so a cron firing
    // every second during those two hours fires for the tenant read in that zone, and never for one read in UTC.
    const zone = 'Pacific/Kiritimati';
    const h = hourIn(zone);
    const cron = `* * ${h},${(h + 1) % 24} * * *`;
    const dir = tempDir();
    const config = join(dir, 'config.json');
    writeFileSync(
      config,
      JSON.stringify({
        baseUrl: sim.url,
        database: join(dir, 'mirror.db'),
        tenants: [
          { slug: east.slug, apiKeyEnv: 'EAST_KEY', schedule: { timezone: zone } },
          { slug: utc.slug, apiKeyEnv: 'UTC_KEY', schedule: { timezone: 'UTC' } },
        ],
      }),
    );
    const child = spawnCli(['sync', '--config', config, '--collection', 'series', '--schedule', cron], {
      env: { EAST_KEY: east.key, UTC_KEY: utc.key, TZ: 'UTC' },
    });
    const done = collect(child);
    const runsOf = (slug: string) =>
      sim.controls.requestLog().filter((e) => e.path.includes(`/${slug}/series`) && e.status === 200).length;
    // Two ticks' worth of syncs of the zoned tenant (each a run of its own).
    let out = '';
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
    });
    await vi.waitFor(() => expect(out.split(east.slug).length - 1).toBeGreaterThanOrEqual(2), {
      timeout: 30_000,
      interval: 50,
    });
    child.kill('SIGTERM');
    const r = await done;
    expect(r.code, r.stderr).toBe(0);
    expect(runsOf(east.slug)).toBeGreaterThanOrEqual(2);
    expect(runsOf(utc.slug)).toBe(0);
  });
});
