import { ConfigError } from '../errors.js';
import { type TenantSlug, tenantSlug } from '../ids.js';
import type { CollectionSlug } from '../partners/collections.js';
import { DEFAULT_BUDGET, type RateBudget } from '../partners/rate-gate.js';
import type { Config } from './config-schema.js';

/** A configured tenant with its key read from the environment. The key stays in memory only. */
export interface ResolvedTenant {
  readonly slug: TenantSlug;
  readonly apiKey: string;
  readonly apiKeyEnv: string;
  readonly budget: RateBudget;
  readonly collections?: readonly CollectionSlug[];
  readonly drafts: boolean;
  readonly locales?: readonly string[];
}

/**
 * Picks the tenants to work on (all, or those named in `only`) and reads each key from the variable its
 * `apiKeyEnv` names. Throws `ConfigError` for an unknown tenant or an unset variable.
 */
export function resolveTenants(config: Config, env: NodeJS.ProcessEnv, only: readonly string[] = []): ResolvedTenant[] {
  for (const slug of only) {
    if (!config.tenants.some((t) => t.slug === slug)) {
      throw new ConfigError(
        `--tenant ${slug}: not a tenant of the config (${config.tenants.map((t) => t.slug).join(', ')})`,
      );
    }
  }
  const chosen = only.length > 0 ? config.tenants.filter((t) => only.includes(t.slug)) : config.tenants;
  return chosen.map((t) => {
    const apiKey = env[t.apiKeyEnv];
    if (!apiKey)
      throw new ConfigError(`tenant ${t.slug}: environment variable ${t.apiKeyEnv} (its apiKeyEnv) is not set`);
    return {
      slug: tenantSlug(t.slug),
      apiKey,
      apiKeyEnv: t.apiKeyEnv,
      budget: { ...DEFAULT_BUDGET, ...t.rateLimit },
      ...(t.collections ? { collections: t.collections } : {}),
      drafts: t.drafts,
      ...(t.locales ? { locales: t.locales } : {}),
    };
  });
}
