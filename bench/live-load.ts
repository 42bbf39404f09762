/**
 * What the live-freshness benches (freshness, watch-fleet) share: the collections they compare and mutate, and
 * their durations, each overridable from the environment so a trial run can be short.
 */
import { COLLECTIONS, type CollectionSlug } from '../src/vocabulary/collections.js';

/** Every collection with records of its own (custom attributes are a bulk route). */
export const MIRRORED: readonly CollectionSlug[] = COLLECTIONS.filter((c) => c !== 'custom-attributes');
/** Those the benches mutate: media are keyed by filename upstream, so they are left out (as the outside check does). */
export const MUTATED: readonly CollectionSlug[] = MIRRORED.filter((c) => c !== 'media');

/** A positive number from the environment variable `name`, else `dflt`. */
export const envNumber = (name: string, dflt: number): number => {
  const v = Number(process.env[name]);
  return Number.isFinite(v) && v > 0 ? v : dflt;
};
