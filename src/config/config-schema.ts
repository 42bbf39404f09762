import * as v from 'valibot';
import { TENANT_SLUG } from '../ids.js';
import { COLLECTIONS } from '../partners/collections.js';

const RateLimit = v.strictObject({
  reads: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1)), 100),
  writes: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1)), 20),
  windowMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1)), 60_000),
});

const Schedule = v.strictObject({
  /** Incremental sync every N minutes; absent or 0 turns it off. */
  incrementalEveryMinutes: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0)), 15),
  /** Full sync with deletion reconciliation, as cron in `timezone`; null turns it off. */
  fullCron: v.optional(v.nullable(v.string()), '0 3 * * *'),
  /** IANA time zone the cron is read in. */
  timezone: v.optional(v.string(), 'UTC'),
});

export const TenantSchema = v.strictObject({
  slug: v.pipe(v.string(), v.regex(TENANT_SLUG, 'a tenant slug is lower-case letters, digits and -')),
  apiKeyEnv: v.pipe(
    v.string(),
    v.regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'apiKeyEnv names an environment variable, it is not the key'),
  ),
  collections: v.optional(v.pipe(v.array(v.picklist(COLLECTIONS)), v.minLength(1))),
  rateLimit: v.optional(RateLimit),
  drafts: v.optional(v.boolean(), false),
  locales: v.optional(v.array(v.pipe(v.string(), v.minLength(1)))),
  schedule: v.optional(Schedule),
});

export const ConfigSchema = v.strictObject({
  /** Where an editor finds this file's JSON Schema (config/understudy.schema.json); ignored by understudy. */
  $schema: v.optional(v.string()),
  baseUrl: v.pipe(v.string(), v.url()),
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
      lockDurationMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1000))),
      stalledIntervalMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(500))),
    }),
  ),
  writes: v.optional(
    v.strictObject({
      attempts: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1)), 8),
    }),
  ),
  tenants: v.pipe(v.array(TenantSchema), v.minLength(1)),
});

export type Config = v.InferOutput<typeof ConfigSchema>;
export type TenantConfig = v.InferOutput<typeof TenantSchema>;
