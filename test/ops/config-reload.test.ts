import { EventEmitter } from 'node:events';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { Config } from '../../src/config/config-schema.js';
import { loadConfigFile } from '../../src/config/load-config.js';
import { effectiveEnv, type ReloadOutcome, watchSighup } from '../../src/ops/config-reload.js';
import { silentLog, tempDir } from '../helpers/sync-harness.js';

const tenant = (slug: string) => ({ slug, apiKeyEnv: `${slug.toUpperCase()}_KEY` });

function setup(tenants: object[], extra: object = {}) {
  const dir = tempDir();
  const configPath = join(dir, 'understudy.json');
  const write = (t: object[], more: object = {}) =>
    writeFileSync(configPath, JSON.stringify({ baseUrl: 'http://127.0.0.1:1', tenants: t, ...extra, ...more }));
  write(tenants);
  const applied: { config: Config; env: NodeJS.ProcessEnv }[] = [];
  const emitter = new EventEmitter();
  let env: NodeJS.ProcessEnv = { A_KEY: 'key-a' };
  const outcomes: ReloadOutcome[] = [];
  const watcher = watchSighup({
    configPath,
    initial: loadConfigFile(configPath),
    target: {
      reload: async (config, e) => {
        applied.push({ config, env: e });
      },
    },
    log: silentLog,
    env: () => env,
    emitter: emitter as unknown as Pick<NodeJS.Process, 'on' | 'off'>,
    onReload: (o) => outcomes.push(o),
  });
  onTestFinished(() => watcher.close());
  return {
    dir,
    write,
    applied,
    emitter,
    outcomes,
    watcher,
    setEnv: (e: NodeJS.ProcessEnv) => {
      env = e;
    },
  };
}

describe('watchSighup', () => {
  it('applies a valid new config with the environment read at reload time', async () => {
    const t = setup([tenant('a')]);
    t.write([tenant('a'), tenant('b')]);
    t.setEnv({ A_KEY: 'key-a2', B_KEY: 'key-b' });
    const outcome = await t.watcher.reload();
    expect(outcome).toEqual({ status: 'applied', tenants: ['a', 'b'], restartNeeded: [] });
    expect(t.applied).toHaveLength(1);
    expect(t.applied[0]?.config.tenants.map((x) => x.slug)).toEqual(['a', 'b']);
    expect(t.applied[0]?.env.A_KEY).toBe('key-a2');
  });

  it('refuses a file that does not parse, or a tenant whose key is unset, without calling the target', async () => {
    const t = setup([tenant('a')]);
    writeFileSync(join(t.dir, 'understudy.json'), '{ nope');
    expect(await t.watcher.reload()).toMatchObject({ status: 'rejected', error: expect.stringContaining('JSON') });
    t.write([tenant('a'), tenant('b')]);
    expect(await t.watcher.reload()).toMatchObject({ status: 'rejected', error: expect.stringContaining('B_KEY') });
    t.write([{ slug: 'Not A Slug', apiKeyEnv: 'A_KEY' }]);
    expect(await t.watcher.reload()).toMatchObject({
      status: 'rejected',
      error: expect.stringContaining('tenants.0.slug'),
    });
    expect(t.applied).toEqual([]);
  });

  it('keeps the old config when the target refuses the new one', async () => {
    const t = setup([tenant('a')]);
    const emitter = new EventEmitter();
    const configPath = join(t.dir, 'understudy.json');
    const w = watchSighup({
      configPath,
      initial: loadConfigFile(configPath),
      target: {
        reload: async () => {
          throw new Error('redis is down');
        },
      },
      log: silentLog,
      env: () => ({ A_KEY: 'k' }),
      emitter: emitter as unknown as Pick<NodeJS.Process, 'on' | 'off'>,
    });
    onTestFinished(() => w.close());
    expect(await w.reload()).toEqual({ status: 'rejected', error: 'redis is down' });
  });

  it('names the fields that need a restart', async () => {
    const t = setup([tenant('a')]);
    t.write([tenant('a')], { baseUrl: 'http://127.0.0.1:2', redis: { prefix: 'other' } });
    expect(await t.watcher.reload()).toMatchObject({ status: 'applied', restartNeeded: ['baseUrl', 'redis'] });
  });

  it('reloads on SIGHUP, runs one more reload for signals that arrive meanwhile, and stops listening on close', async () => {
    const t = setup([tenant('a')]);
    t.emitter.emit('SIGHUP');
    t.emitter.emit('SIGHUP');
    t.emitter.emit('SIGHUP');
    await t.watcher.reload();
    // The first signal's reload, then one more for everything that arrived while it ran.
    expect(t.outcomes).toHaveLength(2);
    await t.watcher.close();
    expect(t.emitter.listenerCount('SIGHUP')).toBe(0);
  });
});

describe('effectiveEnv', () => {
  it('overlays the UNDERSTUDY_ENV_FILE file on the environment, read afresh each call', () => {
    const file = join(tempDir(), 'keys.env');
    writeFileSync(file, '# keys\nA_KEY=first\nB_KEY="with spaces"\n');
    const base = { UNDERSTUDY_ENV_FILE: file, A_KEY: 'from-env', OTHER: 'x' };
    expect(effectiveEnv(base)).toMatchObject({ A_KEY: 'first', B_KEY: 'with spaces', OTHER: 'x' });
    writeFileSync(file, 'A_KEY=second\n');
    expect(effectiveEnv(base).A_KEY).toBe('second');
    expect(effectiveEnv({ A_KEY: 'plain' })).toEqual({ A_KEY: 'plain' });
  });

  it('throws a config error naming the file when it cannot be read', () => {
    expect(() => effectiveEnv({ UNDERSTUDY_ENV_FILE: '/nonexistent/keys.env' })).toThrow(/keys\.env: ENOENT|ENOENT/);
  });
});
