import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import * as v from 'valibot';
import { ConfigError } from '../errors.js';
import { describeIssue, jsonErrorLocation, jsonErrorWords, leafIssues } from './config-issues.js';
import { type Config, ConfigSchema } from './config-schema.js';
import { sharedKeyConflict } from './shared-key-budget.js';
import { watchConflict } from './watch-setting.js';

/** Validates a parsed config object; throws `ConfigError` naming every failing field path. */
export function parseConfig(raw: unknown, source = 'config'): Config {
  const parsed = v.safeParse(ConfigSchema, raw);
  if (!parsed.success) {
    const lines = parsed.issues.flatMap(leafIssues).map((issue) => {
      const { path, text } = describeIssue(issue, ConfigSchema);
      return `${path || '(top level)'}: ${text}`;
    });
    throw new ConfigError(`${source}: ${lines.join('; ')}`);
  }
  const slugs = new Set<string>();
  for (const [i, t] of parsed.output.tenants.entries()) {
    if (slugs.has(t.slug)) throw new ConfigError(`${source}: tenants.${i}.slug: duplicate tenant "${t.slug}"`);
    slugs.add(t.slug);
  }
  const watch = watchConflict(parsed.output);
  if (watch) throw new ConfigError(`${source}: ${watch}`);
  // Tenants naming one variable use one key, so one budget: the gate is per key, and two limits cannot both hold.
  const conflict = sharedKeyConflict(parsed.output.tenants.map((t, i) => ({ ...t, index: i, keyId: t.apiKeyEnv })));
  if (conflict) throw new ConfigError(`${source}: ${conflict}`);
  return parsed.output;
}

/**
 * A database given as a URL is not a path (which engine a URL names is the dialect's question, src/store/dialect.ts;
 * here any URL is left as it is).
 */
const isUrl = (s: string): boolean => URL.canParse(s);

/**
 * Reads and validates a JSON config file. A relative `database` in it is read from the config file's folder, so
 * the file means the same mirror whatever directory the command runs in (a cron job's is `$HOME`).
 */
export function loadConfigFile(path: string): Config {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new ConfigError(
      `cannot read config file ${path}: ${code === 'ENOENT' ? 'no such file' : (code ?? 'error')}`,
      { cause: err },
    );
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    const message = (err as Error).message;
    const { line, column } = jsonErrorLocation(text, message);
    throw new ConfigError(
      `${path}:${line}:${column}: not valid JSON (line ${line}, column ${column}): ${jsonErrorWords(message)}`,
      {
        cause: err,
      },
    );
  }
  const config = parseConfig(raw, path);
  const db = config.database;
  if (db === undefined || isAbsolute(db) || isUrl(db)) return config;
  return { ...config, database: resolve(dirname(resolve(path)), db) };
}
