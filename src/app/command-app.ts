import type { Redis } from 'ioredis';
import { type CloseStep, closeAll, closeOnce } from '../close-all.js';
import { type Config, DEFAULT_QUERY_TIMEOUT_MS } from '../config/config-schema.js';
import { databasePath } from '../config/database-path.js';
import { createLogger, type Logger } from '../log.js';
import { type RedisSettings, redisSettings, shortLivedRedis } from '../queue/redis-settings.js';
import { mirrorMissing } from '../store/dialect.js';
import { type MirrorReader, type MirrorReaderOptions, openMirrorReader } from '../store/mirror-reader.js';
import { type Mirror, openMirror } from '../store/open-mirror.js';
import { type MirrorReads, openMirrorReads } from '../store/reads/mirror-reads.js';
import type { WriteLog } from '../writes/write-log.js';

/** What the short commands' profiles take (`createApp` with `profile: 'reader' | 'queue' | 'mirror'`). */
interface CommandDeps {
  /** Default: a silent logger (these commands report on stdout and stderr). */
  readonly log?: Logger;
  /** The mirror file; default the config's (`UNDERSTUDY_DB`, config `database`, ./data/understudy.db). */
  readonly database?: string;
  /** Where Redis is, instead of `REDIS_URL` / config `redis` (a library caller naming its own). */
  readonly redis?: Partial<RedisSettings>;
}

/** `status`, `backup`: the mirror read-only, opened at once; Redis only when asked for. */
export interface ReaderDeps extends CommandDeps {
  readonly profile: 'reader';
  /** Which mirrors are readable: see `MirrorReaderOptions.schema` (backup copies any). Default `current`. */
  readonly schema?: MirrorReaderOptions['schema'];
}

/** `enqueue`, `sync --enqueue`, `writes`: Redis, connected at once; the mirror only when asked for. */
export interface QueueDeps extends CommandDeps {
  readonly profile: 'queue';
  /** How long Redis has to answer at start; default 3000 ms. */
  readonly redisTimeoutMs?: number;
  /**
   * Reconnect whenever Redis goes away, for the life of a long-running process (`serve`); a call made while it is
   * down still fails within about a second (`US_REDIS`) rather than waiting. Default: a command's connection, which
   * stays down once lost.
   */
  readonly reconnect?: boolean;
}

/** `webhooks enable`: the mirror only when asked for (an existing one, writable if asked; never created); no Redis. */
export interface MirrorDeps extends CommandDeps {
  readonly profile: 'mirror';
}

interface CommandApp extends AsyncDisposable {
  readonly log: Logger;
  readonly config: Config | null;
  readonly env: NodeJS.ProcessEnv;
  readonly databasePath: string;
  /** Where Redis is (the URL may hold a password: redact it before printing) and the key prefix. */
  readonly redisSettings: RedisSettings;
  /** Closes what the app opened, in reverse order, every step even when one fails. Idempotent. */
  close(): Promise<void>;
}

/** A command that reads the mirror (and may look at the queues): `status`, `backup`. */
export interface ReaderApp extends CommandApp {
  /** The mirror, read-only: it existed and was a mirror, or the app was not built (nothing created or changed). */
  readonly mirror: MirrorReader;
  /** Redis, for a look at the queues: connected on the first call (`US_REDIS` within 2 s when it does not answer). */
  redis(): Promise<Redis>;
}

/** A command that reads or changes an existing mirror, opened when asked for: `webhooks enable`, and the queue's. */
export interface MirrorApp extends CommandApp {
  /**
   * The mirror read-only, opened on the first call that finds it; null while its file does not exist (it is never
   * created here).
   */
  mirror(): Promise<MirrorReader | null>;
  /**
   * The existing mirror, writable (`writes retry` marks a replayed bulk write, `webhooks enable` an endpoint),
   * migrated if it is older; null when it does not exist (never created here). Opened once, on the first call.
   */
  writableMirror(): Promise<Mirror | null>;
  /** The writable mirror's write log (`writableMirror`). */
  writableWriteLog(): Promise<WriteLog | null>;
  /**
   * The mirror for the upstream's reads (`serve`), read-only, each statement under config `api.queryTimeoutMs`;
   * opened on the first call, null while its file does not exist (never created here).
   */
  mirrorReads(): Promise<MirrorReads | null>;
}

/** A command that talks to the queues: `enqueue`, `sync --enqueue`, `writes`, `webhooks`, `serve`. */
export interface QueueApp extends MirrorApp {
  /** Redis: it answered when the app was built (`US_REDIS` otherwise). */
  readonly redis: Redis;
}

/** Close steps, run in reverse order of registration; `once` memoizes an opener and registers its closer. */
function resources(name: string) {
  const steps: CloseStep[] = [];
  return {
    add(step: CloseStep) {
      steps.push(step);
    },
    once<T>(open: () => Promise<T>, closeIt: (t: T) => Promise<void>): () => Promise<T> {
      let opened: Promise<T> | null = null;
      return () => {
        if (!opened) {
          const p = open();
          opened = p;
          steps.push(async () => {
            const t = await p.catch(() => null);
            if (t !== null) await closeIt(t);
          });
        }
        return opened;
      };
    },
    /** `once` for an opener that may find nothing yet (null): that result is not kept, the next call looks again. */
    onceThere<T>(open: () => Promise<T | null>, closeIt: (t: T) => Promise<void>): () => Promise<T | null> {
      let opened: Promise<T | null> | null = null;
      return () => {
        if (!opened) {
          const p = open();
          opened = p;
          p.then(
            (t) => {
              if (t === null) opened = null;
              else steps.push(() => closeIt(t));
            },
            () => {
              opened = null;
            },
          );
        }
        return opened;
      };
    },
    close: closeOnce(() => closeAll([...steps].reverse(), name)),
  };
}

const quit = async (redis: Redis): Promise<void> => {
  await redis.quit().catch(() => redis.disconnect());
};

function base(config: Config | null, env: NodeJS.ProcessEnv, deps: CommandDeps) {
  const settings = redisSettings(config, env);
  return {
    log: deps.log ?? createLogger({ level: 'silent' }),
    config,
    env,
    databasePath: deps.database ?? databasePath(config ?? {}, env),
    redisSettings: { url: deps.redis?.url ?? settings.url, prefix: deps.redis?.prefix ?? settings.prefix },
  };
}

/** The `reader` profile of `createApp`. */
export async function createReaderApp(
  config: Config | null,
  env: NodeJS.ProcessEnv,
  deps: ReaderDeps,
): Promise<ReaderApp> {
  const b = base(config, env, deps);
  const r = resources('understudy');
  const mirror = await openMirrorReader(b.databasePath, deps.schema ? { schema: deps.schema } : {});
  r.add(() => mirror.close());
  const redis = r.once(
    () => shortLivedRedis(b.redisSettings.url, 2000, { enableOfflineQueue: true, maxRetriesPerRequest: 1 }),
    quit,
  );
  return { ...b, mirror, redis, close: r.close, [Symbol.asyncDispose]: r.close };
}

/** The `queue` profile of `createApp`. */
export async function createQueueApp(
  config: Config | null,
  env: NodeJS.ProcessEnv,
  deps: QueueDeps,
): Promise<QueueApp> {
  const b = base(config, env, deps);
  const r = resources('understudy');
  const redis = await shortLivedRedis(b.redisSettings.url, deps.redisTimeoutMs ?? 3000, {
    maxRetriesPerRequest: 3,
    enableOfflineQueue: true,
    ...(deps.reconnect ? { retryStrategy: (times: number) => Math.min(200 * times, 2000) } : {}),
  });
  r.add(() => quit(redis));
  return { ...b, redis, ...mirrorOnDemand(config, b.databasePath, r), close: r.close, [Symbol.asyncDispose]: r.close };
}

/** The `mirror` profile of `createApp`: the queue profile's mirror without Redis. */
export async function createMirrorApp(
  config: Config | null,
  env: NodeJS.ProcessEnv,
  deps: MirrorDeps,
): Promise<MirrorApp> {
  const b = base(config, env, deps);
  const r = resources('understudy');
  return { ...b, ...mirrorOnDemand(config, b.databasePath, r), close: r.close, [Symbol.asyncDispose]: r.close };
}

/** An existing mirror, each way of opening it on the first call that finds it, closed with the app's resources. */
function mirrorOnDemand(
  config: Config | null,
  database: string,
  r: ReturnType<typeof resources>,
): Pick<MirrorApp, 'mirror' | 'writableMirror' | 'writableWriteLog' | 'mirrorReads'> {
  // A PostgreSQL mirror is there or not at the server's say; a SQLite file must exist (never created here).
  const exists = () => !mirrorMissing(database);
  // Not there yet (serve started before the first sync): looked for again at the next call.
  const mirror = r.onceThere(
    () => (exists() ? openMirrorReader(database) : Promise.resolve(null)),
    (m) => m.close(),
  );
  const writableMirror = r.onceThere(
    async () => (exists() ? openMirror(database) : null),
    (m) => m.close(),
  );
  const writableWriteLog = async () => (await writableMirror())?.writeLog ?? null;
  const timeoutMs = config?.api?.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS;
  const mirrorReads = r.onceThere(
    () => (exists() ? openMirrorReads(database, { timeoutMs }) : Promise.resolve(null)),
    (m) => m.close(),
  );
  return { mirror, writableMirror, writableWriteLog, mirrorReads };
}
