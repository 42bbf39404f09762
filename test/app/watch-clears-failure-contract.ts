import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import type { StatusReport } from '../../src/cli/status-command.js';
import { startSimulator } from '../../src/sim/start-simulator.js';
import { writeConfig } from '../helpers/operator.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';
import { runCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/sync-harness.js';
import { startWorker } from '../helpers/understudy-process.js';

// One engine per test file (watch-clears-failure-sqlite, watch-clears-failure-postgres), so the two run side by side.

/** The test on one engine: `database` gives the mirror (a SQLite path in the test's folder, or a PostgreSQL URL). */
export function watchClearsFailureContract(engine: string, database: (dir: string) => Promise<string>): void {
  let redis: TestRedis;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.stop();
  });

  describe(`a failed manual run, then a worker that watches the collection, on ${engine}`, () => {
    it('status --check goes from 5 to 0 once watch has probed it, and status says "failed HH:MM, fresh since HH:MM"', async () => {
      const sim = await startSimulator({ port: 0, readLimit: 0, writeLimit: 0, records: 10, tenants: 1 });
      onTestFinished(() => sim.close());
      const t = sim.tenants[0];
      if (!t) throw new Error('no tenant');
      const dir = tempDir();
      const db = await database(dir);
      const tenant = (apiKeyEnv: string, more: Record<string, unknown> = {}) => ({ slug: t.slug, apiKeyEnv, ...more });
      const good = writeConfig(dir, 'good.json', { baseUrl: sim.url, database: db, tenants: [tenant('KEY')] });
      const bad = writeConfig(dir, 'bad.json', { baseUrl: sim.url, database: db, tenants: [tenant('WRONG')] });
      // TZ: the table's clock times are local; UTC here, to compare them with the report's instants.
      const env = { KEY: t.key, WRONG: 'sk_not-the-key-not-the-key', TZ: 'UTC', LOG_LEVEL: 'warn' };
      const cli = (...args: string[]) => runCli(args, { env });
      const first = await cli('sync', '--config', good, '--quiet');
      expect(first.code, first.stderr).toBe(0);

      const refused = await cli('sync', '--config', bad, '--collection', 'pages', '--quiet');
      expect(refused.code).toBe(3);
      const red = await cli('status', '--config', good, '--check', '--quiet');
      expect(red.code).toBe(5);
      expect(red.stderr).toMatch(new RegExp(`^understudy status: ${t.slug} pages: last run failed: .*401`, 'm'));

      // The worker watches with the good key, every schedule off: nothing but watch's probes runs.
      const watching = writeConfig(dir, 'watch.json', {
        baseUrl: sim.url,
        database: db,
        redis: { url: redis.url, prefix: `t-${randomUUID()}` },
        watch: true,
        tenants: [tenant('KEY', { schedule: { incrementalEveryMinutes: 0, fullCron: null } })],
      });
      const worker = startWorker(watching, [], env);
      await vi.waitFor(
        async () => {
          const r = await cli('status', '--config', good, '--check', '--quiet');
          expect(r.code, r.stderr).toBe(0);
          expect(r.stderr).toBe('');
        },
        { timeout: 60_000, interval: 1000 },
      );
      // No upstream change came in between: no run has written pages since its failure.
      const json = await cli('status', '--config', good, '--json');
      const report = JSON.parse(json.stdout) as StatusReport;
      const pages = report.tenants[0]?.collections.find((c) => c.name === 'pages');
      expect(pages?.lastError).toMatch(/401/);
      const failedAt = pages?.lastErrorAt ?? '';
      const freshSince = pages?.freshSince ?? '';
      expect(Date.parse(freshSince)).toBeGreaterThan(Date.parse(failedAt));
      expect(Date.parse(pages?.lastSuccessAt ?? '')).toBeLessThan(Date.parse(failedAt));
      expect(pages?.watch?.lastFreshAt).toBeTruthy();

      const table = await cli('status', '--config', good);
      expect(table.code, table.stderr).toBe(0);
      const line = table.stdout.split('\n').find((l) => l.includes(' pages ')) ?? '';
      const hhmm = (iso: string) => iso.slice(11, 16);
      expect(line).toContain(`failed ${hhmm(failedAt)}, fresh since ${hhmm(freshSince)}`);
      const stopped = await worker.stop();
      expect(stopped.code, worker.log()).toBe(0);
    }, 120_000);
  });
}
