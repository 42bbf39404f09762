import { readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { closeOnce } from '../close-all.js';
import type { Config } from '../config/config-schema.js';
import { loadConfigFile } from '../config/load-config.js';
import { resolveTenants } from '../config/resolve-tenants.js';
import { ConfigError, describeError } from '../errors.js';
import type { Logger } from '../log.js';

/** Names a file of `NAME=value` lines (API keys) read at start and again on each reload. */
export const ENV_FILE_ENV = 'UNDERSTUDY_ENV_FILE';

/**
 * The environment the worker resolves keys from: the process environment, overlaid with the file that
 * `UNDERSTUDY_ENV_FILE` names (when set). A running process cannot see a changed environment, so rotating a key
 * without a restart goes through that file. Throws `ConfigError` when the file cannot be read.
 */
export function effectiveEnv(base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const file = base[ENV_FILE_ENV];
  if (!file) return { ...base };
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(
      `cannot read ${ENV_FILE_ENV} file ${file}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`,
      {
        cause: err,
      },
    );
  }
  return { ...base, ...parseEnv(text) };
}

/** The worker side of a reload. */
export interface ReloadTarget {
  /**
   * Applies a validated config and environment: adds and removes tenants, rebuilds each tenant's client with its
   * current key and upserts or removes job schedulers. Jobs already running keep the client they started with.
   * Throws to refuse the config, keeping the old one.
   */
  reload(config: Config, env: NodeJS.ProcessEnv): Promise<unknown>;
}

export type ReloadOutcome =
  | { readonly status: 'applied'; readonly tenants: readonly string[]; readonly restartNeeded: readonly string[] }
  | { readonly status: 'rejected'; readonly error: string };

export interface SighupOptions {
  readonly configPath: string;
  /** The config the process started with (for the fields that need a restart to change). */
  readonly initial: Config;
  readonly target: ReloadTarget;
  readonly log: Logger;
  /** Default `process.env` (read again at each reload, with the env file). */
  readonly env?: () => NodeJS.ProcessEnv;
  /** Default `process`; tests pass an emitter. */
  readonly emitter?: Pick<NodeJS.Process, 'on' | 'off'>;
  /** Called after each reload attempt (tests, metrics). */
  readonly onReload?: (outcome: ReloadOutcome) => void;
  /** Whether every tenant's API key must be set for a reload to apply; default true (`serve` holds no keys). */
  readonly requireKeys?: boolean;
}

export interface SighupWatcher {
  /** Re-reads and applies the config now (as SIGHUP does); resolves with what happened. */
  reload(): Promise<ReloadOutcome>;
  /** Stops listening for SIGHUP and waits for a reload in progress. Idempotent. */
  close(): Promise<void>;
}

/** Fields read once at start: changing them needs a restart. */
const RESTART_FIELDS = ['baseUrl', 'database', 'redis', 'worker', 'writes'] as const;

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/**
 * One reload: re-reads the file and the environment, checks every key is there, applies them through the target.
 * Resolves with what happened (logged); `current` is the config in force, replaced when the reload applied.
 */
async function attemptReload(
  opts: SighupOptions,
  envOf: () => NodeJS.ProcessEnv,
  current: { config: Config },
): Promise<ReloadOutcome> {
  const { log, configPath } = opts;
  let outcome: ReloadOutcome;
  try {
    const next = loadConfigFile(configPath);
    const env = envOf();
    if (opts.requireKeys !== false) resolveTenants(next, env); // every key present before anything changes
    const restartNeeded = RESTART_FIELDS.filter((f) => !same(next[f], current.config[f]));
    await opts.target.reload(next, env);
    current.config = next;
    outcome = { status: 'applied', tenants: next.tenants.map((t) => t.slug), restartNeeded };
    log.info({ config: configPath, tenants: outcome.tenants }, 'config reloaded');
    if (restartNeeded.length > 0) {
      log.warn({ fields: restartNeeded }, 'config reloaded, but these fields only take effect after a restart');
    }
  } catch (err) {
    outcome = { status: 'rejected', error: describeError(err) };
    log.error({ config: configPath, err: outcome.error }, 'config reload refused; keeping the previous config');
  }
  opts.onReload?.(outcome);
  return outcome;
}

/** Runs `attempt`, one at a time: a call during a run asks for one more run after it, and shares its outcome. */
function oneAtATime(attempt: () => Promise<ReloadOutcome>): {
  run(): Promise<ReloadOutcome>;
  running(): Promise<unknown> | null;
} {
  let running: Promise<ReloadOutcome> | null = null;
  let again = false;
  const run = (): Promise<ReloadOutcome> => {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      let outcome = await attempt();
      while (again) {
        again = false;
        outcome = await attempt();
      }
      return outcome;
    })().finally(() => {
      running = null;
    });
    return running;
  };
  return { run, running: () => running };
}

/**
 * Reloads the config on SIGHUP: re-reads the file and the environment (with `UNDERSTUDY_ENV_FILE`), validates
 * both (every tenant's key variable must be set), then hands them to `target.reload`. A bad file or a missing
 * key logs an error and keeps the old config. Signals that arrive during a reload run one more reload after it.
 */
export function watchSighup(opts: SighupOptions): SighupWatcher {
  const { log, configPath } = opts;
  const emitter = opts.emitter ?? process;
  const envOf = opts.env ?? (() => effectiveEnv(process.env));
  const current = { config: opts.initial };
  const reloads = oneAtATime(() => attemptReload(opts, envOf, current));
  const onSignal = () => {
    log.info({ config: configPath }, 'SIGHUP: reloading the config');
    // The outcome is logged inside; nothing awaits a signal handler.
    void reloads.run();
  };
  emitter.on('SIGHUP', onSignal);
  return {
    reload: reloads.run,
    close: closeOnce(async () => {
      emitter.off('SIGHUP', onSignal);
      await reloads.running()?.catch(() => undefined);
    }),
  };
}
