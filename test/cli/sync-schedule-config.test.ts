import { describe, expect, it, vi } from 'vitest';
import { plain, rowsOf, runShell, shq, startOnTerminal, tenantConfig, twoTenantSim } from '../helpers/operator.js';
import { tempDir } from '../helpers/sync-harness.js';

describe('sync --schedule without a CRON: the config’s schedules', () => {
  it('runs the first incremental at once, and Ctrl-C during a run says what was committed', async () => {
    const { sim, a } = await twoTenantSim({ records: 40, maxLimit: 20 });
    const { config, db } = tenantConfig(tempDir(), sim.url, [
      {
        slug: a.slug,
        apiKeyEnv: 'KEY_A',
        rateLimit: { reads: 1, writes: 20, windowMs: 1000 },
        schedule: { incrementalEveryMinutes: 1, fullCron: '0 3 * * *', timezone: 'America/New_York' },
      },
    ]);
    const run = startOnTerminal(['sync', '--config', config, '--schedule'], { KEY_A: a.key });
    await vi.waitFor(() => expect(rowsOf(db, 'pages', a.slug)).toBeGreaterThan(0), { timeout: 60_000, interval: 200 });
    const pid = run.pid();
    expect(pid).not.toBeNull();
    process.kill(pid as number, 'SIGINT');
    const { code, text } = await run.done;
    expect(code).toBe(0);
    const shown = plain(text);
    expect(shown).toMatch(
      /schedule: \S+, incremental every 1 min \(the first now\), full on "0 3 \* \* \*" in America\/New_York/,
    );
    expect(shown).toMatch(
      /understudy sync: stopped: committed \d+ records \(.*pages \d+.*\); the next run resumes from there/,
    );
  });

  it('on a terminal shows the next run, in the tenant’s zone; off one, prints nothing between runs', async () => {
    const { sim, a } = await twoTenantSim();
    const { config } = tenantConfig(tempDir(), sim.url, [
      {
        slug: a.slug,
        apiKeyEnv: 'KEY_A',
        // Incremental runs every two days: the daily full is the next run at any time of day the test runs.
        schedule: { incrementalEveryMinutes: 2880, fullCron: '0 3 * * *', timezone: 'Europe/London' },
      },
    ]);
    const run = startOnTerminal(['sync', '--config', config, '--schedule'], { KEY_A: a.key });
    // After the first run, the terminal's last line is the next one.
    await vi.waitFor(() => expect(plain(run.text())).toMatch(/\nnext: full at .*\n?$/), { timeout: 60_000 });
    const pid = run.pid();
    process.kill(pid as number, 'SIGINT');
    const { code, text } = await run.done;
    expect(code).toBe(0);
    expect(plain(text)).toMatch(/next: full at (\w{3} )?03:00 Europe\/London, in (\d+ h \d\d min|\d+ min) \(/);
    expect(plain(text)).toMatch(/stopped between runs; every run so far is committed/);

    // Off a terminal (cron, a service manager): nothing while all is well with --quiet.
    const quiet = await runShell(`timeout -s INT 8 $U sync --config ${shq(config)} --schedule --quiet </dev/null`, {
      KEY_A: a.key,
    });
    expect(quiet.stdout).toBe('');
    expect(quiet.stderr).toMatch(/^(understudy sync: stopped.*\n)?$/);
  });

  it('refuses --schedule alone when no chosen tenant has a schedule', async () => {
    const { config } = tenantConfig(tempDir(), 'http://127.0.0.1:9', [{ slug: 'acme', apiKeyEnv: 'KEY_A' }]);
    const r = await runShell(`$U sync --config ${shq(config)} --schedule`, { KEY_A: 'sk_x' });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/no tenant chosen has one: add "schedule" to a tenant/);
  });
});
