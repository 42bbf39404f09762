import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { endpointId } from '../../src/changes/webhook-endpoints.js';
import { openMirror } from '../../src/store/open-mirror.js';
import { writeConfig } from '../helpers/operator.js';
import { runCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/sync-harness.js';

const HOOK = 'http://127.0.0.1:9/hook';

/** A config with one endpoint, whose Redis is a port nothing listens on: `webhooks enable` must not need it. */
function setup() {
  const dir = tempDir();
  const database = join(dir, 'm.db');
  const config = writeConfig(dir, 'c.json', {
    baseUrl: 'http://127.0.0.1:9',
    database,
    redis: { url: 'redis://127.0.0.1:9' },
    tenants: [{ slug: 'acme', apiKeyEnv: 'KEY_A', webhooks: [{ url: HOOK, secretEnv: 'HOOK_SECRET' }] }],
  });
  const env = { KEY_A: 'k', REDIS_URL: 'redis://127.0.0.1:9' };
  return { database, config, env, id: endpointId('acme', HOOK) };
}

describe('understudy webhooks enable', () => {
  it('turns a disabled endpoint back on in the mirror, with no Redis reachable', async () => {
    const { database, config, env, id } = setup();
    const before = await openMirror(database);
    await before.changes.endpoint(id, 'acme', HOOK, '2026-03-01T00:00:00.000Z');
    await before.changes.disableEndpoint(id, 'HTTP 410 Gone', '2026-03-01T00:00:01.000Z');
    await before.close();
    const r = await runCli(['webhooks', 'enable', HOOK, '--config', config], { env });
    expect([r.code, r.stdout, r.stderr]).toEqual([0, `${id} enabled\n`, '']);
    const after = await openMirror(database);
    onTestFinished(() => after.close());
    expect((await after.changes.endpoints()).map((e) => [e.id, e.disabledAt])).toEqual([[id, null]]);
  }, 60_000);

  it('refuses an endpoint the mirror does not know (exit 2), and a mirror not synced yet (exit 2, none created)', async () => {
    const { database, config, env } = setup();
    const missing = await runCli(['webhooks', 'enable', 'nope', '--config', config], { env });
    expect([missing.code, missing.stdout, missing.stderr]).toEqual([
      2,
      '',
      `understudy webhooks: database ${database} does not exist (run \`understudy sync\` first)\n`,
    ]);
    expect(existsSync(database)).toBe(false);
    await (await openMirror(database)).close();
    const unknown = await runCli(['webhooks', 'enable', 'nope', '--config', config], { env });
    expect([unknown.code, unknown.stderr]).toEqual([
      2,
      'understudy webhooks: no webhook endpoint nope in the mirror\n',
    ]);
  }, 60_000);
});
