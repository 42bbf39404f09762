import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { startSimulator } from '../../src/sim/start-simulator.js';
import { collect, runCli, spawnCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/sync-harness.js';

async function sim(opts: Parameters<typeof startSimulator>[0] = {}) {
  const s = await startSimulator({ port: 0, readLimit: 0, writeLimit: 0, records: 10, routes: 'full', ...opts });
  onTestFinished(() => s.close());
  const t = s.tenants[0];
  if (!t) throw new Error('no tenant');
  return { s, t };
}

describe('understudy sync (CLI)', () => {
  it('mirrors a tenant from flags and prints exactly one JSON object with --json', async () => {
    const { s, t } = await sim();
    const db = join(tempDir(), 'm.db');
    const r = await runCli(['sync', '--base-url', s.url, '--tenant', t.slug, '--db', db, '--json'], {
      env: { PARTNERS_API_KEY: t.key },
    });
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(Object.keys(out)).toEqual(['tenants']);
    expect(out.tenants[0].slug).toBe(t.slug);
    const series = out.tenants[0].collections.find((c: { name: string }) => c.name === 'series');
    expect(Object.keys(series)).toEqual([
      'name',
      'fetched',
      'inserted',
      'updated',
      'unchanged',
      'deleted',
      'future',
      'undated',
      'requests',
      'rateLimited',
      'ms',
    ]);
    expect(series.inserted).toBe(s.controls.docs(t.slug, 'series').length);
    // The key is never stored.
    const wal = `${db}-wal`;
    const bytes = readFileSync(db).toString('latin1') + (existsSync(wal) ? readFileSync(wal).toString('latin1') : '');
    expect(bytes).not.toContain(t.key);
    expect(r.stderr).not.toContain(t.key);
  });

  it('syncs every tenant of a config file, keys read from the variables it names', async () => {
    const { s } = await sim();
    const dir = tempDir();
    const cfg = join(dir, 'c.json');
    const env: NodeJS.ProcessEnv = {};
    const tenants = s.tenants.map((t, i) => {
      env[`K${i}`] = t.key;
      return { slug: t.slug, apiKeyEnv: `K${i}`, collections: ['series', 'events'] };
    });
    writeFileSync(cfg, JSON.stringify({ baseUrl: s.url, database: join(dir, 'm.db'), tenants }));
    const r = await runCli(['sync', '--config', cfg, '--json'], { env });
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.tenants.map((t: { slug: string }) => t.slug)).toEqual(s.tenants.map((t) => t.slug));
    expect(out.tenants[1].collections.map((c: { name: string }) => c.name)).toEqual(['series', 'events']);
  });

  it('exits 2 naming the field for a bad config, and for unknown flags', async () => {
    const dir = tempDir();
    const cfg = join(dir, 'c.json');
    writeFileSync(cfg, JSON.stringify({ baseUrl: 'http://x', tenants: [{ slug: 'a', apiKeyEnv: 'K', colour: 1 }] }));
    const bad = await runCli(['sync', '--config', cfg]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/tenants\.0/);
    expect(bad.stderr).toMatch(/colour/);
    const typo = await runCli(['sync', '--config', cfg, '--bogus-flag']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/bogus-flag/);
    const noKey = await runCli(['sync', '--base-url', 'http://127.0.0.1:9', '--tenant', 'a'], {
      env: { PARTNERS_API_KEY: '' },
    });
    expect(noKey.code).toBe(2);
    // Without a config, the words are the flags' (issue 37, item 12): no apiKeyEnv, no "the tenant's" config entry.
    expect(noKey.stderr).toBe(
      'understudy sync: set PARTNERS_API_KEY to the API key of tenant a (without --config, the key is read from it)\n',
    );
  });

  it('exits 3 with a one-line reason when the key is refused', async () => {
    const { s, t } = await sim();
    const r = await runCli(['sync', '--base-url', s.url, '--tenant', t.slug, '--db', join(tempDir(), 'x.db')], {
      env: { PARTNERS_API_KEY: 'wrong-key-wrong-key-wrong' },
    });
    expect(r.code).toBe(3);
    expect(r.stderr.trim().split('\n').at(-1)).toMatch(/401/);
  });

  it('a refused key for one tenant gives exit 3 while the others run to their end, and --json tells what every tenant did', async () => {
    const { s } = await sim();
    const dir = tempDir();
    const cfg = join(dir, 'c.json');
    const [good, bad] = s.tenants;
    if (!good || !bad) throw new Error('two tenants expected');
    writeFileSync(
      cfg,
      JSON.stringify({
        baseUrl: s.url,
        database: join(dir, 'm.db'),
        tenants: [
          { slug: good.slug, apiKeyEnv: 'GOOD_KEY' },
          { slug: bad.slug, apiKeyEnv: 'BAD_KEY' },
        ],
      }),
    );
    const r = await runCli(['sync', '--config', cfg, '--json'], {
      env: { GOOD_KEY: good.key, BAD_KEY: 'refused-refused-refused-key' },
    });
    expect(r.code).toBe(3);
    const out = JSON.parse(r.stdout);
    expect(out.tenants.map((t: { slug: string }) => t.slug)).toEqual([good.slug, bad.slug]);
    for (const t of out.tenants) expect(Array.isArray(t.collections)).toBe(true);
    expect(r.stderr).not.toContain('refused-refused-refused-key');
  });

  it('exits 4 when the upstream stays unavailable after retries', async () => {
    const { s, t } = await sim();
    s.controls.injectFaults({ kind: 'status', status: 503, count: 1000 });
    const r = await runCli(
      ['sync', '--base-url', s.url, '--tenant', t.slug, '--collection', 'series', '--db', join(tempDir(), 'x.db')],
      {
        env: { PARTNERS_API_KEY: t.key },
      },
    );
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/503/);
  }, 120_000);

  it('resumes after kill -9 from the last committed page', async () => {
    const { s, t } = await sim({ maxLimit: 5, records: 12 });
    const db = join(tempDir(), 'k.db');
    const args = [
      'sync',
      '--base-url',
      s.url,
      '--tenant',
      t.slug,
      '--collection',
      'event-instances',
      '--db',
      db,
      '--json',
    ];
    s.controls.injectFaults({ kind: 'latency', ms: 150, count: 1000, match: { path: '/event-instances' } });
    const child = spawnCli(args, { env: { PARTNERS_API_KEY: t.key } });
    const done = collect(child);
    await vi.waitFor(
      () => {
        const d = new Database(db, { readonly: true, fileMustExist: true });
        try {
          const n = d.prepare('SELECT count(*) AS n FROM event_instances').get() as { n: number };
          expect(n.n).toBeGreaterThanOrEqual(10);
        } finally {
          d.close();
        }
      },
      { timeout: 30_000, interval: 50 },
    );
    child.kill('SIGKILL');
    await done;
    const before = s.controls.requestLog().length;
    const r = await runCli(args, { env: { PARTNERS_API_KEY: t.key } });
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    const total = s.controls.docs(t.slug, 'event-instances').length;
    expect(out.tenants[0].collections[0].fetched).toBeLessThan(total);
    const first = s.controls
      .requestLog()
      .slice(before)
      .find((x) => x.path.includes('event-instances'));
    expect(first?.path).toMatch(/where/);
    const d = new Database(db, { readonly: true });
    const n = d.prepare('SELECT count(*) AS n FROM event_instances WHERE deleted_at IS NULL').get() as { n: number };
    d.close();
    expect(n.n).toBe(total);
  });

  it('--schedule syncs on each tick without Redis and exits 0 on SIGTERM', async () => {
    const { s, t } = await sim();
    const db = join(tempDir(), 's.db');
    const child = spawnCli(
      [
        'sync',
        '--base-url',
        s.url,
        '--tenant',
        t.slug,
        '--collection',
        'series',
        '--db',
        db,
        '--schedule',
        '* * * * * *',
      ],
      { env: { PARTNERS_API_KEY: t.key } },
    );
    const done = collect(child);
    let out = '';
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
    });
    await vi.waitFor(() => expect(out.match(/series/g)?.length ?? 0).toBeGreaterThanOrEqual(2), { timeout: 20_000 });
    child.kill('SIGTERM');
    const r = await done;
    expect(r.code).toBe(0);
  });

  it('--enqueue adds a sync job to Redis and prints its id instead of syncing', async () => {
    const { startRedis } = await import('../helpers/redis-server.js');
    const redis = await startRedis();
    onTestFinished(() => redis.stop());
    const { s, t } = await sim();
    const db = join(tempDir(), 'e.db');
    const r = await runCli(
      ['sync', '--enqueue', '--base-url', s.url, '--tenant', t.slug, '--collection', 'series', '--db', db],
      {
        env: { PARTNERS_API_KEY: t.key, REDIS_URL: redis.url },
      },
    );
    expect(r.code, r.stderr).toBe(0);
    const id = r.stdout.trim().split('\n').at(-1);
    expect(id).toBeTruthy();
    expect(existsSync(db)).toBe(false);
    expect(s.controls.requestLog().filter((x) => x.path.includes('/series'))).toHaveLength(0);
  });
});
