import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { configJsonSchema } from '../../src/config/config-json-schema.js';
import { parseConfig } from '../../src/config/load-config.js';

const configDir = new URL('../../config/', import.meta.url);
const examples = readdirSync(configDir).filter((f) => f.endsWith('.json') && !f.endsWith('.schema.json'));

describe('config/', () => {
  it('holds the example configs: one tenant, several tenants with schedules, the Docker setup', () => {
    expect(examples.sort()).toEqual(['one-tenant.json', 'several-tenants.json', 'understudy.json']);
  });

  it.each(examples)('%s is a valid config', (file) => {
    const raw: unknown = JSON.parse(readFileSync(new URL(file, configDir), 'utf8'));
    expect(() => parseConfig(raw, file)).not.toThrow();
  });

  it('understudy.schema.json is the schema generated from the config schema (npm run schemas rewrites it)', () => {
    const committed: unknown = JSON.parse(readFileSync(new URL('understudy.schema.json', configDir), 'utf8'));
    expect(committed).toEqual(configJsonSchema());
  });
});
