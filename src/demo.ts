/**
 * `npm run demo`: the main job end to end on embedded defaults. Starts the bundled Partners API simulator, mirrors
 * both of its tenants into a fresh SQLite file with `understudy sync`, runs a sample `understudy sql` query, and
 * shuts everything down. No Redis, no network beyond loopback.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sqlCommand } from './cli/sql-command.js';
import { syncCommand } from './cli/sync-command.js';
import { startSimulator } from './sim/start-simulator.js';

process.env.LOG_LEVEL ??= 'warn'; // the summary table says what happened; JSON logs would drown it
const dir = mkdtempSync(join(tmpdir(), 'understudy-demo-'));
const sim = await startSimulator({ seed: 7, records: 30, routes: 'full' });
let code = 0;
try {
  const db = join(dir, 'demo.db');
  const config = join(dir, 'understudy.json');
  const tenants = sim.tenants.map((t, i) => {
    // Keys live in the environment only; the config names the variable.
    process.env[`DEMO_KEY_${i}`] = t.key;
    return { slug: t.slug, apiKeyEnv: `DEMO_KEY_${i}` };
  });
  writeFileSync(config, JSON.stringify({ baseUrl: sim.url, database: db, tenants }, null, 2));
  process.stdout.write(`Simulator at ${sim.url} with tenants ${sim.tenants.map((t) => t.slug).join(', ')}\n\n`);
  process.stdout.write(`$ understudy sync --config ${config}\n`);
  code = await syncCommand(['--config', config]);
  if (code === 0) {
    const query = `SELECT v.title AS venue, count(*) AS performances, min(i.start_date) AS next
FROM event_instances i JOIN venues v ON v.tenant = i.tenant AND v.id = i.venue_id
WHERE i.deleted_at IS NULL
GROUP BY i.tenant, v.id ORDER BY performances DESC LIMIT 8`;
    process.stdout.write(`\n$ understudy sql --db ${db} "${query.replace(/\n/g, ' ')}"\n`);
    code = await sqlCommand(['--db', db, query]);
  }
} finally {
  await sim.close();
  rmSync(dir, { recursive: true, force: true });
}
process.exitCode = code;
