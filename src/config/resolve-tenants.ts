import { ConfigError } from '../errors.js';
import { keyHash } from '../partners/key-hash.js';
import { DEFAULT_BUDGET, type RateBudget } from '../partners/rate-gate.js';
import type { CollectionSlug } from '../vocabulary/collections.js';
import { type TenantSlug, tenantSlug } from '../vocabulary/ids.js';
import type { WatchKnobs } from '../vocabulary/watch-knobs.js';
import type { Config } from './config-schema.js';
import { sharedKeyConflict } from './shared-key-budget.js';
import { watchOf } from './watch-setting.js';

/** A configured tenant with its key read from the environment. The key stays in memory only. */
export interface ResolvedTenant {
  readonly slug: TenantSlug;
  readonly apiKey: string;
  readonly apiKeyEnv: string;
  readonly budget: RateBudget;
  readonly collections?: readonly CollectionSlug[];
  readonly drafts: boolean;
  readonly locales?: readonly string[];
  /** How the tenant is kept live (config `watch`, docs/watch.md), durations in milliseconds; null: not watched. */
  readonly watch: WatchKnobs | null;
}

/**
 * Picks the tenants to work on (all, or those named in `only`) and reads each key from the variable its
 * `apiKeyEnv` names. Throws `ConfigError` for an unknown tenant, or naming every unset variable.
 */
export function resolveTenants(config: Config, env: NodeJS.ProcessEnv, only: readonly string[] = []): ResolvedTenant[] {
  for (const slug of only) {
    if (!config.tenants.some((t) => t.slug === slug)) {
      throw new ConfigError(
        `--tenant ${slug}: not a tenant of the config (${config.tenants.map((t) => t.slug).join(', ')})`,
      );
    }
  }
  // Every tenant whose variable is set, chosen or not: a key shared with a tenant not synced now still has one budget.
  const keyed = config.tenants.flatMap((t, index) => {
    const key = env[t.apiKeyEnv];
    return key ? [{ ...t, index, keyId: keyHash(key) }] : [];
  });
  const conflict = sharedKeyConflict(keyed, 'hold the same key');
  if (conflict) throw new ConfigError(conflict);
  const chosen = only.length > 0 ? config.tenants.filter((t) => only.includes(t.slug)) : config.tenants;
  // Every unset variable at once: an operator setting up several tenants fixes them all in one go.
  const unset = chosen.filter((t) => !env[t.apiKeyEnv]).map((t) => `${t.apiKeyEnv} (tenant ${t.slug})`);
  if (unset.length > 0) {
    const [one, ...more] = unset;
    throw new ConfigError(
      more.length === 0
        ? `environment variable ${one} is not set (the tenant's apiKeyEnv names it)`
        : `environment variables ${unset.join(', ')} are not set (each tenant's apiKeyEnv names one)`,
    );
  }
  return chosen.map((t) => {
    const apiKey = env[t.apiKeyEnv] as string;
    return {
      slug: tenantSlug(t.slug),
      apiKey,
      apiKeyEnv: t.apiKeyEnv,
      budget: { ...DEFAULT_BUDGET, ...t.rateLimit },
      ...(t.collections ? { collections: t.collections } : {}),
      drafts: t.drafts,
      ...(t.locales ? { locales: t.locales } : {}),
      watch: watchOf(config, t),
    };
  });
}
