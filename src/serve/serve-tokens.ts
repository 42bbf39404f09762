import { hash, timingSafeEqual } from 'node:crypto';
import type { ApiScope, Config } from '../config/config-schema.js';
import { ConfigError } from '../errors.js';

/** A token of `serve`, resolved: its name, tenants and scopes, and a digest of its value (never the value). */
export interface ServeToken {
  readonly name: string;
  /** `*`: every tenant of the config. */
  readonly tenants: '*' | readonly string[];
  readonly scopes: readonly ApiScope[];
  readonly digest: Buffer;
}

/** Shortest token accepted: a guessable one is refused at start. */
export const MIN_TOKEN_LENGTH = 16;

const digestOf = (token: string): Buffer => hash('sha256', token, 'buffer');

/**
 * The tokens of config `api.tokens`, their values from `env`. Throws `ConfigError` naming the entry by its path
 * (`api.tokens.1.tokenEnv: …`) when there is none, a variable is unset or too short, a tenant is not in the config,
 * or two entries hold the same token. No message shows a token's value.
 */
export function resolveServeTokens(config: Config, env: NodeJS.ProcessEnv): ServeToken[] {
  const entries = config.api?.tokens ?? [];
  if (entries.length === 0)
    throw new ConfigError(
      'api.tokens: no token configured; serve needs at least one ({ "name", "tokenEnv", "tenants", "scopes" }, docs/api.md)',
    );
  const slugs = new Set(config.tenants.map((t) => t.slug));
  const seen = new Map<string, number>();
  return entries.map((t, i) => {
    const value = env[t.tokenEnv];
    if (value === undefined || value === '')
      throw new ConfigError(`api.tokens.${i}.tokenEnv: ${t.tokenEnv} is not set (the token "${t.name}" has no value)`);
    if (value.length < MIN_TOKEN_LENGTH)
      throw new ConfigError(
        `api.tokens.${i}.tokenEnv: ${t.tokenEnv} holds fewer than ${MIN_TOKEN_LENGTH} characters; use a long random value (openssl rand -hex 24)`,
      );
    if (t.tenants !== '*') {
      const j = t.tenants.findIndex((s) => !slugs.has(s));
      if (j >= 0)
        throw new ConfigError(`api.tokens.${i}.tenants.${j}: "${t.tenants[j]}" is not a tenant of the config`);
    }
    const digest = digestOf(value);
    const key = digest.toString('hex');
    const twin = seen.get(key);
    if (twin !== undefined) throw new ConfigError(`api.tokens.${i}.tokenEnv: the same token as api.tokens.${twin}`);
    seen.set(key, i);
    return { name: t.name, tenants: t.tenants, scopes: t.scopes, digest };
  });
}

/**
 * The token a request presents: `Authorization: Bearer <token>`, or the Partners API's own `users API-Key <token>`
 * (so an existing client changes only its base URL and its key). Null when there is none.
 */
export function presentedToken(authorization: string | undefined): string | null {
  const m = /^\s*(?:Bearer|users\s+API-Key)\s+(\S+)\s*$/i.exec(authorization ?? '');
  return m ? (m[1] as string) : null;
}

/** The token whose value is `presented`, compared in constant time with every token (no early exit). */
export function tokenMatching(tokens: readonly ServeToken[], presented: string): ServeToken | null {
  const given = digestOf(presented);
  let hit: ServeToken | null = null;
  for (const t of tokens) if (timingSafeEqual(t.digest, given) && hit === null) hit = t;
  return hit;
}

/** Whether a token may reach a tenant. */
export const reaches = (t: ServeToken, tenant: string): boolean => t.tenants === '*' || t.tenants.includes(tenant);
