import { didYouMean } from '../config/did-you-mean.js';
import { UsageError } from '../errors.js';
import { COLLECTIONS, type CollectionSlug, collectionNamed } from '../vocabulary/collections.js';

/**
 * The collections `--collection` flags name, each by its API path (`event-instances`) or its table's name
 * (`event_instances`), among those the command takes. Anything else is a `UsageError` (exit 2) naming it, with the
 * name most likely meant (`did you mean "event-instances"?`), else the list.
 */
export function collectionFlags(
  names: readonly string[] = [],
  among: readonly CollectionSlug[] = COLLECTIONS,
  notAmong = 'not a collection',
): CollectionSlug[] {
  return names.map((name) => {
    const c = collectionNamed(name);
    if (c !== undefined && among.includes(c)) return c;
    const hint = c === undefined ? didYouMean(name.replace(/_/g, '-'), among) : '';
    const why = c === undefined ? 'not a collection' : notAmong;
    throw new UsageError(`--collection ${name}: ${why}${hint || `; one of ${among.join(', ')}`}`);
  });
}
