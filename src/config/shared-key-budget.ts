import { DEFAULT_BUDGET, type RateBudget } from '../partners/rate-gate.js';

interface KeyedTenant {
  readonly slug: string;
  readonly index: number;
  /** What identifies the key: the variable's name at load, the key's hash once the environment is read. */
  readonly keyId: string;
  readonly apiKeyEnv: string;
  readonly rateLimit?: Partial<RateBudget> | undefined;
}

const budgetOf = (t: KeyedTenant): RateBudget => ({ ...DEFAULT_BUDGET, ...t.rateLimit });
const same = (a: RateBudget, b: RateBudget): boolean =>
  a.reads === b.reads && a.writes === b.writes && a.windowMs === b.windowMs;
const show = (b: RateBudget): string => `{reads ${b.reads}, writes ${b.writes}, windowMs ${b.windowMs}}`;

/**
 * One API key has one budget, however many tenants use it: the first pair of tenants on one key with different
 * effective `rateLimit`s (defaults filled in), described naming both, or null when every key has one budget.
 */
export function sharedKeyConflict(tenants: readonly KeyedTenant[], how = 'use the same key'): string | null {
  const first = new Map<string, KeyedTenant>();
  for (const t of tenants) {
    const seen = first.get(t.keyId);
    if (!seen) {
      first.set(t.keyId, t);
      continue;
    }
    const a = budgetOf(seen);
    const b = budgetOf(t);
    if (!same(a, b)) {
      const via = seen.apiKeyEnv === t.apiKeyEnv ? `apiKeyEnv ${t.apiKeyEnv}` : `${seen.apiKeyEnv} and ${t.apiKeyEnv}`;
      return (
        `tenants.${t.index}.rateLimit: tenants "${seen.slug}" and "${t.slug}" ${how} (${via}) but have different ` +
        `rateLimit (${show(a)} and ${show(b)}); one key has one budget, so give them the same rateLimit`
      );
    }
  }
  return null;
}
