import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { rowsOf, runShell, shq, tenantConfig, twoTenantSim } from '../helpers/operator.js';
import { tempDir } from '../helpers/sync-harness.js';

/** A two-tenant config whose keys are in KEY_A and KEY_B. */
async function twoTenants() {
  const { sim, a, b } = await twoTenantSim();
  const dir = tempDir();
  const { config, db } = tenantConfig(dir, sim.url, [
    { slug: a.slug, apiKeyEnv: 'KEY_A' },
    { slug: b.slug, apiKeyEnv: 'KEY_B' },
  ]);
  return { sim, a, b, dir, db, config, keys: { KEY_A: a.key, KEY_B: b.key } };
}

describe('cron-safe: silent when all is well (no terminal, setsid, stdin from /dev/null)', () => {
  it('a healthy two-tenant sync --quiet prints nothing at all, and mirrors both tenants', async () => {
    const t = await twoTenants();
    const r = await runShell(`$U sync --config ${shq(t.config)} --quiet </dev/null`, t.keys);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe('');
    expect(rowsOf(t.db, 'series', t.a.slug)).toBeGreaterThan(0);
    expect(rowsOf(t.db, 'series', t.b.slug)).toBeGreaterThan(0);
  });

  it('--json: stdout is exactly one JSON object, stderr empty on success', async () => {
    const t = await twoTenants();
    const r = await runShell(`$U sync --config ${shq(t.config)} --json </dev/null`, t.keys);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    const out = JSON.parse(r.stdout) as { tenants: { slug: string }[] };
    expect(out.tenants.map((x) => x.slug)).toEqual([t.a.slug, t.b.slug]);
  });

  it('backup --quiet and status --check --quiet print nothing on success', async () => {
    const t = await twoTenants();
    const copy = join(t.dir, 'b.db');
    const r = await runShell(
      `$U sync --config ${shq(t.config)} --quiet && $U backup --config ${shq(t.config)} --quiet ${shq(copy)} && ` +
        `$U status --config ${shq(t.config)} --check --quiet`,
      t.keys,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout + r.stderr).toBe('');
    expect(existsSync(copy)).toBe(true);
  });

  it('takes the keys from UNDERSTUDY_ENV_FILE and from --env-file, for every command alike', async () => {
    const t = await twoTenants();
    const envFile = join(t.dir, 'keys.env');
    writeFileSync(envFile, `KEY_A=${t.a.key}\nKEY_B=${t.b.key}\n`);
    const viaEnv = await runShell(`$U sync --config ${shq(t.config)} --quiet`, { UNDERSTUDY_ENV_FILE: envFile });
    expect(viaEnv.code, viaEnv.stderr).toBe(0);
    expect(rowsOf(t.db, 'series', t.b.slug)).toBeGreaterThan(0);
    const viaFlag = await runShell(`$U sync --config ${shq(t.config)} --full --quiet --env-file ${shq(envFile)}`);
    expect(viaFlag.code, viaFlag.stderr).toBe(0);
    // The env file may name the database too, for a command that reads the mirror.
    writeFileSync(envFile, `UNDERSTUDY_DB=${t.db}\n`);
    const sql = await runShell(`$U sql --env-file ${shq(envFile)} --json "SELECT count(*) AS n FROM series"`);
    expect(sql.code, sql.stderr).toBe(0);
    expect((JSON.parse(sql.stdout) as { n: number }[])[0]?.n).toBeGreaterThan(0);
    // (Through UNDERSTUDY_ENV_FILE: Node 20 itself looks at a --env-file anywhere on its command line, and stops
    // with its own message, exit 9, when the file is missing.)
    const missing = await runShell('$U status', { UNDERSTUDY_ENV_FILE: join(t.dir, 'nope.env') });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/UNDERSTUDY_ENV_FILE .*nope\.env: cannot read it \(no such file\)/);
  });

  it('a bad LOG_LEVEL exits 2 naming the allowed levels, for sync and worker alike', async () => {
    const t = await twoTenants();
    for (const cmd of ['sync', 'worker']) {
      const r = await runShell(`$U ${cmd} --config ${shq(t.config)}`, { ...t.keys, LOG_LEVEL: 'warning' });
      expect(r.code, `${cmd}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(/LOG_LEVEL=warning is not a log level: use one of trace, debug, info, warn, error/);
      expect(r.stderr).toMatch(/did you mean "warn"/);
      expect(r.stderr.split('\n').filter(Boolean)).toHaveLength(1);
    }
  });

  it('ends quietly when its reader closes the pipe (sql … | head), in every output format', async () => {
    const t = await twoTenants();
    const q =
      "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x<200000) SELECT x, printf('%040d', x) AS pad FROM c";
    const sync = await runShell(`$U sync --config ${shq(t.config)} --quiet`, t.keys);
    expect(sync.code, sync.stderr).toBe(0);
    for (const format of ['', '--json', '--csv', '--nl', '--timeout 60']) {
      // bash, for the writer's own exit status (PIPESTATUS); `err` holds what it said on stderr.
      const r = await runShell(
        `bash -c ${shq(`$U sql --db ${shq(t.db)} ${format} ${shq(q)} 2>err | head -c 10 >/dev/null; echo "exit \${PIPESTATUS[0]}"; cat err`)}`,
        {},
        t.dir,
      );
      expect(r.stdout, `${format || 'table'}: ${r.stdout}`).toBe('exit 0\n');
    }
  });
});
