import { readFileSync } from 'node:fs';
import * as v from 'valibot';
import { ConfigError } from '../errors.js';
import { type Config, ConfigSchema } from './config-schema.js';
import { sharedKeyConflict } from './shared-key-budget.js';

/** Validates a parsed config object; throws `ConfigError` naming every failing field path. */
export function parseConfig(raw: unknown, source = 'config'): Config {
  const parsed = v.safeParse(ConfigSchema, raw);
  if (!parsed.success) {
    const lines = parsed.issues.map((issue) => {
      const path = v.getDotPath(issue);
      return `${path ?? '(root)'}: ${issue.message}`;
    });
    throw new ConfigError(`${source}: ${lines.join('; ')}`);
  }
  const slugs = new Set<string>();
  for (const [i, t] of parsed.output.tenants.entries()) {
    if (slugs.has(t.slug)) throw new ConfigError(`${source}: tenants.${i}.slug: duplicate tenant "${t.slug}"`);
    slugs.add(t.slug);
  }
  // Tenants naming one variable use one key, so one budget: the gate is per key, and two limits cannot both hold.
  const conflict = sharedKeyConflict(parsed.output.tenants.map((t, i) => ({ ...t, index: i, keyId: t.apiKeyEnv })));
  if (conflict) throw new ConfigError(`${source}: ${conflict}`);
  return parsed.output;
}

/** Reads and validates a JSON config file. */
export function loadConfigFile(path: string): Config {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`cannot read config file ${path}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`, {
      cause: err,
    });
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(`${path}: not valid JSON (${(err as Error).message})`, { cause: err });
  }
  return parseConfig(raw, path);
}
