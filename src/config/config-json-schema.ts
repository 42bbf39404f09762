import { toJsonSchema } from '@valibot/to-json-schema';
import { ConfigSchema } from './config-schema.js';

/**
 * The config file's JSON Schema, generated from the valibot schema that validates it, so editors complete and check
 * the same fields `understudy` accepts. Checks JSON Schema cannot say (cron expressions, time zones, one rate limit
 * per key) are left to the loader. config/understudy.schema.json is this, written by `npm run schemas`.
 */
export function configJsonSchema(): Record<string, unknown> {
  const generated = toJsonSchema(ConfigSchema, { errorMode: 'ignore' }) as Record<string, unknown>;
  return {
    $schema: generated.$schema ?? 'http://json-schema.org/draft-07/schema#',
    title: 'understudy config',
    description: 'The config file of understudy (bin/understudy --config FILE); see README.md.',
    ...generated,
  };
}
