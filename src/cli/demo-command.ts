import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSimulator } from '../sim/start-simulator.js';
import { parseFlags } from './parse-flags.js';
import { sqlCommand } from './sql-command.js';
import { syncCommand } from './sync-command.js';

const HELP = `usage: understudy demo

The main job end to end on embedded defaults (what \`npm run demo\` runs): starts the bundled Partners API
simulator, mirrors both of its tenants into a fresh SQLite file in a temporary folder with \`understudy sync\`,
runs a sample \`understudy sql\` query, and removes the folder again. No Redis, no network beyond loopback.
Exits with the code of the sync (or of the query).
`;

const FLAGS = { help: { type: 'boolean', short: 'h' } } as const;

const QUERY = `SELECT v.title AS venue, count(*) AS performances, min(i.start_date) AS next
FROM event_instances i JOIN venues v ON v.tenant = i.tenant AND v.id = i.venue_id
WHERE i.deleted_at IS NULL
GROUP BY i.tenant, v.id ORDER BY performances DESC LIMIT 8`;

export async function demoCommand(argv: string[]): Promise<number> {
  const { values } = parseFlags(argv, FLAGS);
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  process.env.LOG_LEVEL ??= 'warn'; // the summary table says what happened; JSON logs would drown it
  const dir = mkdtempSync(join(tmpdir(), 'understudy-demo-'));
  const sim = await startSimulator({ seed: 7, records: 30, routes: 'full' });
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
    const code = await syncCommand(['--config', config]);
    if (code !== 0) return code;
    process.stdout.write(`\n$ understudy sql --db ${db} "${QUERY.replace(/\n/g, ' ')}"\n`);
    return await sqlCommand(['--db', db, QUERY]);
  } finally {
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
