import * as v from 'valibot';
import { COLLECTION_NAMES, type CollectionSlug, collectionNamed } from '../vocabulary/collections.js';
import { durationSeconds } from '../vocabulary/duration.js';
import { TENANT_SLUG } from '../vocabulary/ids.js';
import { DEFAULT_MAX_BODY_BYTES } from '../writes/validate-write.js';
import { isCronExpression, isTimeZone } from './schedule-checks.js';

const RateLimit = v.strictObject({
  reads: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1)), 100),
  writes: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1)), 20),
  windowMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1)), 60_000),
});

const Schedule = v.strictObject({
  /** Incremental sync every N minutes; absent or 0 turns it off. */
  incrementalEveryMinutes: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0)), 15),
  /** Full sync with deletion reconciliation, as cron in `timezone`; null turns it off. */
  fullCron: v.optional(
    v.nullable(
      v.pipe(
        v.string(),
        v.check(isCronExpression, 'not a cron expression (5 fields, or 6 with seconds first: "0 3 * * *")'),
      ),
    ),
    '0 3 * * *',
  ),
  /**
   * Self-check (`understudy check`, one `limit=1` read per collection and variant) as cron in `timezone`; null or
   * absent turns it off.
   */
  checkCron: v.optional(
    v.nullable(
      v.pipe(
        v.string(),
        v.check(isCronExpression, 'not a cron expression (5 fields, or 6 with seconds first: "0 3 * * *")'),
      ),
    ),
  ),
  /** IANA time zone the cron is read in. */
  timezone: v.optional(
    v.pipe(v.string(), v.check(isTimeZone, 'not an IANA time zone (e.g. "Europe/London", "UTC")')),
    'UTC',
  ),
});

/** A collection by its API path (`event-instances`) or its table's name (`event_instances`); read as the API path. */
const Collections = v.optional(
  v.pipe(
    v.array(
      v.pipe(
        v.picklist(COLLECTION_NAMES),
        v.transform((name) => collectionNamed(name) as CollectionSlug),
      ),
    ),
    v.minLength(1),
  ),
);

/** POSIX environment variable names, as `apiKeyEnv` takes them. */
const ENV_NAME = /^[A-Z_][A-Z0-9_]*$/;

/** One signed outbound webhook (Standard Webhooks) of a tenant: its changes, in `seq` order. */
const WebhookFields = v.strictObject({
  url: v.pipe(
    v.string(),
    v.url('not a URL'),
    v.check((u) => URL.canParse(u) && /^https?:$/.test(new URL(u).protocol), 'must be an http: or https: URL'),
  ),
  /** The environment variable holding the endpoint's secret (`whsec_` + base64), never the secret itself. */
  secretEnv: v.pipe(
    v.string(),
    v.regex(
      ENV_NAME,
      'must name an environment variable (upper-case letters, digits and _, e.g. "HARBOUR_HOOK_SECRET"), not hold the secret; the value is not shown, since it may be a secret',
    ),
  ),
  /** Only changes of these collections (default: all). */
  collections: Collections,
  /** Only changes of these kinds (default: all). */
  kinds: v.optional(v.pipe(v.array(v.picklist(['insert', 'update', 'delete', 'revive'])), v.minLength(1))),
  /**
   * Only deletes with these reasons: `deleted` (gone upstream) or `unpublished` (a draft only upstream). Other kinds
   * still follow `kinds`; without `kinds`, only deletes are sent.
   */
  reasons: v.optional(v.pipe(v.array(v.picklist(['deleted', 'unpublished'])), v.minLength(1))),
});
const Webhook = v.pipe(
  WebhookFields,
  v.forward(
    v.partialCheck(
      [['kinds'], ['reasons']],
      (w) => !w.reasons || !w.kinds || w.kinds.includes('delete'),
      'reasons select deletes: kinds must then include "delete"',
    ),
    ['reasons'],
  ),
);

const DURATION_WORDS = 'must be a duration such as "10s" or "2m"';

/** A duration with its unit (`"10s"`, `"2m"`, `"1m30s"`): a bare number could mean seconds or milliseconds. */
const isDurationText = (text: string): boolean =>
  /[a-z]/i.test(text) && Number.isFinite(durationSeconds(text) ?? Number.NaN);

const Duration = v.pipe(
  v.string((issue) => `${DURATION_WORDS} (got ${JSON.stringify(issue.input)})`),
  v.check(isDurationText, (issue) => `${DURATION_WORDS} (got ${JSON.stringify(issue.input)})`),
);

/** A share of a key's read budget: above 0, at most 1. */
const Share = v.pipe(v.number(), v.gtValue(0), v.maxValue(1));

/**
 * Watch's knobs (issue 26, docs/watch.md), each optional: a knob left out comes from the top-level `watch`, then
 * from `DEFAULT_WATCH`. Checks across knobs (`idleShare` not above `maxShare`, `all` not below `hot`) are made once
 * they are merged (`watchConflict`), since a tenant may set one knob of a pair and the top level the other.
 */
const WatchKnobsSchema = v.strictObject({
  /** The share of the key's read budget watch may use at most. */
  maxShare: v.optional(Share),
  /** The share its probes use when nothing changes. */
  idleShare: v.optional(Share),
  /** The freshness target of a changing collection. */
  hot: v.optional(
    v.pipe(
      Duration,
      // Only a readable duration is compared: a bad one has its own message, and one line per field is enough.
      v.check(
        (text) => !isDurationText(text) || (durationSeconds(text) ?? 0) >= 2,
        (issue) => `must be at least "2s" (got ${JSON.stringify(issue.input)})`,
      ),
    ),
  ),
  /** The freshness target of every collection. */
  all: v.optional(Duration),
});

/** `true` (the default knobs), `false` (off), or an object of knobs. */
const WatchSchema = v.union(
  [v.boolean(), WatchKnobsSchema],
  'must be true, false or an object of knobs (maxShare, idleShare, hot, all)',
);

export const TenantSchema = v.strictObject({
  slug: v.pipe(v.string(), v.regex(TENANT_SLUG, 'a tenant slug is lower-case letters, digits and -')),
  // POSIX names environment variables in upper case, digits and _. Anything else is refused without echoing it:
  // it may be the key itself, pasted by mistake.
  apiKeyEnv: v.pipe(
    v.string(),
    v.regex(
      /^[A-Z_][A-Z0-9_]*$/,
      'must name an environment variable (upper-case letters, digits and _, e.g. "HARBOUR_KEY"), not hold the key; the value is not shown, since it may be a key',
    ),
  ),
  collections: Collections,
  rateLimit: v.optional(RateLimit),
  drafts: v.optional(v.boolean(), false),
  locales: v.optional(v.array(v.pipe(v.string(), v.minLength(1)))),
  schedule: v.optional(Schedule),
  /** Enqueue rules for this tenant's writes: `allowExtraFields` lets bodies carry fields the spec does not show. */
  writes: v.optional(v.strictObject({ allowExtraFields: v.optional(v.boolean(), false) })),
  /** Signed outbound webhooks: the worker POSTs this tenant's changes to each (docs/changes.md). */
  webhooks: v.optional(
    v.pipe(
      v.array(Webhook),
      v.check((hooks) => new Set(hooks.map((h) => h.url)).size === hooks.length, 'a webhook url is listed twice'),
    ),
  ),
  /** Live freshness for this tenant: replaces the top-level `watch`, knob by knob when both are objects. */
  watch: v.optional(WatchSchema),
});

/** What a serve token may do: enqueue writes, read the mirror, follow the change feed. */
export const API_SCOPES = ['write', 'read', 'changes'] as const;

/** One token of `understudy serve` (docs/api.md): its name, where its value is, its tenants and scopes. */
const ApiToken = v.strictObject({
  /** Shown in logs, metrics and on each job it enqueued; never the token itself. */
  name: v.pipe(
    v.string(),
    v.regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'a token name is 1 to 64 letters, digits, ".", "_" or "-"'),
  ),
  /** The environment variable holding the token (at least 16 characters), never the token itself. */
  tokenEnv: v.pipe(
    v.string(),
    v.regex(
      ENV_NAME,
      'must name an environment variable (upper-case letters, digits and _, e.g. "SITE_WRITER_TOKEN"), not hold the token; the value is not shown, since it may be a token',
    ),
  ),
  /** The tenants it may reach: a list of slugs, or "*" for every tenant of the config. */
  tenants: v.union(
    [
      v.literal('*'),
      v.pipe(
        v.array(v.pipe(v.string(), v.regex(TENANT_SLUG, 'a tenant slug is lower-case letters, digits and -'))),
        v.minLength(1),
      ),
    ],
    'must be "*" or a list of tenant slugs',
  ),
  scopes: v.pipe(v.array(v.picklist(API_SCOPES)), v.minLength(1)),
});

/** serve's cap on a read's `limit` (`api.maxLimit`) and the time limit of a read's statement (`api.queryTimeoutMs`). */
export const DEFAULT_MAX_LIMIT = 1000;
export const DEFAULT_QUERY_TIMEOUT_MS = 2000;

/** `understudy serve` (docs/api.md); every field optional, but serve needs at least one token. */
const ApiSchema = v.strictObject({
  tokens: v.optional(
    v.pipe(
      v.array(ApiToken),
      v.check((ts) => new Set(ts.map((t) => t.name)).size === ts.length, 'a token name is listed twice'),
    ),
    [],
  ),
  /** Requests a minute per token, shared by every serve process through Redis. */
  rateLimit: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1)), 600),
  /** The largest `limit` a read answers (a larger one is capped, as the upstream caps it); also caps `limit=0`. */
  maxLimit: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1)), DEFAULT_MAX_LIMIT),
  /** How long one statement of a read may run (ms) before the read answers 503. */
  queryTimeoutMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1)), DEFAULT_QUERY_TIMEOUT_MS),
  /** Origins a browser may call serve from (CORS); absent or empty: CORS is off. */
  cors: v.optional(
    v.strictObject({
      origins: v.array(
        v.pipe(
          v.string(),
          v.check(
            (o) => o === '*' || (URL.canParse(o) && new URL(o).origin === o),
            'an origin, e.g. "https://example.org"',
          ),
        ),
      ),
    }),
  ),
});

export const ConfigSchema = v.strictObject({
  /** Where an editor finds this file's JSON Schema (config/understudy.schema.json); ignored by understudy. */
  $schema: v.optional(v.string()),
  baseUrl: v.pipe(
    v.string(),
    v.url('not a URL'),
    // Checked even when v.url() has failed (valibot runs the whole pipe), hence URL.canParse.
    v.check((u) => URL.canParse(u) && /^https?:$/.test(new URL(u).protocol), 'must be an http: or https: URL'),
  ),
  database: v.optional(v.pipe(v.string(), v.minLength(1))),
  redis: v.optional(
    v.strictObject({
      url: v.optional(v.pipe(v.string(), v.minLength(1))),
      prefix: v.optional(v.pipe(v.string(), v.minLength(1))),
    }),
  ),
  /** `understudy worker` tuning (issue 4); every field optional. */
  worker: v.optional(
    v.strictObject({
      concurrency: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
      attempts: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
      backoffMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
      /** BullMQ's job lock: a job whose worker died is taken up again once it expires. */
      lockDurationMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1000)), 30_000),
      /** How often stalled jobs are looked for (default min(30000, lockDurationMs)). */
      stalledIntervalMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(500))),
      /** A sync waiting this long for its key's read budget gives its slot back, when other keys' syncs wait. */
      parkAfterMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(10)), 2000),
      /** How long a parked sync stays out of the queue before it asks for the budget again. */
      parkForMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(10)), 5000),
      /** How long a worker waits for Redis at its first start before it exits 1 (default 30000). */
      redisStartTimeoutMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(100))),
    }),
    {},
  ),
  /** Sync tuning (issue 10); every field optional. */
  sync: v.optional(
    v.strictObject({
      /**
       * How far ahead of a run's start an upstream `updatedAt` may be before the record counts as future-dated
       * (counted, logged, a metric). The cursor never moves past the run's start whatever this is.
       */
      clockSkewMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(86_400_000))),
    }),
  ),
  writes: v.optional(
    v.strictObject({
      attempts: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1)), 8),
      /** Largest write body accepted at enqueue, in bytes of compact JSON. */
      maxBodyBytes: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1)), DEFAULT_MAX_BODY_BYTES),
      /** Total time a write may spend on 429s before it fails (1 hour). */
      maxRateLimitWaitMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0)), 3_600_000),
    }),
    {},
  ),
  /** The change log (`changes` table); every field optional. */
  changes: v.optional(
    v.strictObject({
      /** Changes older than this many days are pruned by the worker (hourly). */
      retainDays: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(36_500)), 30),
    }),
    {},
  ),
  /** Longest upstream response body read, in bytes (enforced while streaming); over it the request fails. */
  maxResponseBytes: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1024)), 32 * 1024 * 1024),
  /** Live freshness (docs/watch.md) for every tenant that does not say otherwise; absent: off. */
  watch: v.optional(WatchSchema),
  tenants: v.pipe(v.array(TenantSchema), v.minLength(1)),
  /** `understudy serve`: its tokens, rate limit and CORS. */
  api: v.optional(ApiSchema),
});

export type Config = v.InferOutput<typeof ConfigSchema>;
export type TenantConfig = v.InferOutput<typeof TenantSchema>;
/** A `watch` setting as written: `true`, `false`, or knobs (durations still as text). */
export type WatchSetting = v.InferOutput<typeof WatchSchema>;
/** The knobs of a `watch` object, as written. */
export type WatchKnobsSetting = v.InferOutput<typeof WatchKnobsSchema>;
export type ApiConfig = v.InferOutput<typeof ApiSchema>;
export type ApiTokenConfig = v.InferOutput<typeof ApiToken>;
export type ApiScope = (typeof API_SCOPES)[number];
