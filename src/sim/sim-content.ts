import type { CollectionSlug } from '../vocabulary/collections.js';
import type { Generator } from './sim-doc-parts.js';
import { editorialGenerators } from './sim-gen-editorial.js';
import { placeGenerators } from './sim-gen-places.js';
import { programmeGenerators } from './sim-gen-programme.js';
import { siteGenerators } from './sim-gen-site.js';

/** The record generator of every collection. */
export const GENERATORS: Readonly<Record<CollectionSlug, Generator>> = {
  ...placeGenerators,
  ...programmeGenerators,
  ...editorialGenerators,
  ...siteGenerators,
};

/** Which custom-attribute config array governs a collection's `attributes`. */
export const ATTRIBUTE_CONFIG: Readonly<Partial<Record<CollectionSlug, string>>> = {
  events: 'EventsAttributes',
  'event-instances': 'EventInstancesAttributes',
  posts: 'PostsAttributes',
  seasons: 'SeasonsAttributes',
  series: 'SeriesAttributes',
  venues: 'VenuesAttributes',
  organizations: 'OrganizationsAttributes',
};

/** Generation order: a collection only refers to collections generated before it. */
export const GENERATION_ORDER: readonly CollectionSlug[] = [
  'media',
  'venues',
  'organizations',
  'seasons',
  'series',
  'events',
  'event-instances',
  'pages',
  'blogs',
  'posts',
  'forms',
  'redirects',
  'custom-attributes',
];

export const countFor = (c: CollectionSlug, records: number): number => {
  if (c === 'custom-attributes') return 1;
  if (c === 'event-instances') return records * 3;
  if (c === 'seasons' || c === 'blogs') return Math.max(2, Math.ceil(records / 4));
  if (c === 'venues') return Math.max(2, Math.ceil(records / 2));
  return Math.max(1, records);
};
