import type { ReadQuery } from '../partners/partners-client.js';
import { type CollectionSlug, VERSIONED } from '../vocabulary/collections.js';
import { PUBLISHED, type Variant } from './store-port.js';
import type { TenantTarget } from './sync-run.js';

/** One copy of a collection to mirror, and the read parameters that fetch it. */
export interface VariantSpec {
  readonly variant: Variant;
  readonly query: ReadQuery;
}

/** The copies of a collection a tenant mirrors: published always; drafts and extra locales when configured. */
export function variantsFor(target: TenantTarget, c: CollectionSlug): VariantSpec[] {
  const drafts = target.drafts === true && VERSIONED.has(c);
  const out: VariantSpec[] = [{ variant: PUBLISHED, query: {} }];
  if (drafts) out.push({ variant: 'draft', query: { draft: true } });
  for (const locale of target.locales ?? []) {
    out.push({ variant: `locale:${locale}`, query: { locale } });
    if (drafts) out.push({ variant: `draft+locale:${locale}`, query: { draft: true, locale } });
  }
  return out;
}
