import { JOINS, LOCALIZED, STATIC_JOINS } from '../sim/sim-schema.js';
import type { CollectionCopies, ReadView } from '../store/reads/read-spec.js';
import { PUBLISHED } from '../sync/store-port.js';
import { type CollectionSlug, VERSIONED } from '../vocabulary/collections.js';

/** What a read asks for: the draft or the published version, in a locale with a fallback. */
export interface ReadWants {
  readonly draft: boolean;
  readonly locale: string;
  readonly fallback: string | null;
}

/** The default locale: the published rows and the `draft` copy hold it. */
const DEFAULT_LOCALE = 'en';

/** Fields the upstream computes from other records (joins), never stored values. */
export const computedFields = (c: CollectionSlug): ReadonlySet<string> =>
  new Set([...JOINS[c].map((j) => j.field), ...(STATIC_JOINS[c] ?? [])]);

const synced = (copies: CollectionCopies, variant: string): boolean => (copies.variants.get(variant) ?? null) !== null;

/**
 * The copy of the collection that answers a read, or the variant it would need when the mirror has none: the
 * published rows or `draft` in the default locale; else the copy of every locale (`locale:all`, resolved here as the
 * upstream resolves it), or the copy of exactly that locale when the fallback is the default one.
 */
export function copyFor(
  tenant: string,
  c: CollectionSlug,
  wants: ReadWants,
  copies: CollectionCopies,
): { view: ReadView } | { missing: string } {
  const draft = wants.draft && VERSIONED.has(c);
  const base = { tenant, collection: c, computed: computedFields(c) };
  if (wants.locale === DEFAULT_LOCALE) {
    const variant = draft ? 'draft' : PUBLISHED;
    return synced(copies, variant) ? { view: { ...base, variant, locale: null } } : { missing: variant };
  }
  const every = draft ? 'draft+locale:all' : 'locale:all';
  if (synced(copies, every)) {
    // A where or sort on a localized field reads `all` as the default locale, as the upstream does.
    const locale = wants.locale === 'all' ? DEFAULT_LOCALE : wants.locale;
    return { view: { ...base, variant: every, locale: { locale, fallback: wants.fallback, fields: LOCALIZED } } };
  }
  const exact = `${draft ? 'draft+' : ''}locale:${wants.locale}`;
  if (wants.locale !== 'all' && wants.fallback === DEFAULT_LOCALE && synced(copies, exact))
    return { view: { ...base, variant: exact, locale: null } };
  return { missing: every };
}
