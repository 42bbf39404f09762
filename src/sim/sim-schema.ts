import type { CollectionSlug } from '../vocabulary/collections.js';

/** Field facts the simulator needs per collection: relationships, joins, localized and date fields. */
export interface RelField {
  readonly field: string;
  readonly to: CollectionSlug;
  readonly hasMany: boolean;
}
export interface JoinField {
  readonly field: string;
  /** The collection whose records point here, and the field on them that does. */
  readonly from: CollectionSlug;
  readonly on: string;
}

export const LOCALES = ['en', 'fr'] as const;
export type Locale = (typeof LOCALES)[number];
export const DEFAULT_LOCALE: Locale = 'en';

/** Localized fields (top level): stored as `{ en, fr? }`, returned per the request's locale. */
export const LOCALIZED: ReadonlySet<string> = new Set([
  'title',
  'displayTitle',
  'description',
  'name',
  'alt',
  'caption',
]);

export const RELATIONSHIPS: Readonly<Record<CollectionSlug, readonly RelField[]>> = {
  pages: [
    { field: 'parent', to: 'pages', hasMany: false },
    { field: 'image', to: 'media', hasMany: false },
  ],
  posts: [
    { field: 'blog', to: 'blogs', hasMany: false },
    { field: 'image', to: 'media', hasMany: false },
  ],
  blogs: [{ field: 'image', to: 'media', hasMany: false }],
  seasons: [{ field: 'image', to: 'media', hasMany: false }],
  series: [{ field: 'image', to: 'media', hasMany: false }],
  events: [
    { field: 'season', to: 'seasons', hasMany: false },
    { field: 'series', to: 'series', hasMany: true },
    { field: 'venue', to: 'venues', hasMany: false },
    { field: 'organization', to: 'organizations', hasMany: false },
    { field: 'image', to: 'media', hasMany: false },
  ],
  'event-instances': [
    { field: 'event', to: 'events', hasMany: false },
    { field: 'venue', to: 'venues', hasMany: false },
    { field: 'series', to: 'series', hasMany: true },
  ],
  venues: [{ field: 'image', to: 'media', hasMany: false }],
  organizations: [{ field: 'image', to: 'media', hasMany: false }],
  media: [],
  forms: [],
  redirects: [],
  'custom-attributes': [],
};

export const JOINS: Readonly<Record<CollectionSlug, readonly JoinField[]>> = {
  pages: [],
  posts: [],
  blogs: [{ field: 'posts', from: 'posts', on: 'blog' }],
  seasons: [{ field: 'events', from: 'events', on: 'season' }],
  series: [{ field: 'event-instances', from: 'event-instances', on: 'series' }],
  events: [{ field: 'event-instances', from: 'event-instances', on: 'event' }],
  'event-instances': [],
  venues: [],
  organizations: [],
  media: [],
  forms: [],
  redirects: [],
  'custom-attributes': [],
};

/** Blogs' `categories` and `tags` are joined fields of collections the spec does not expose: always empty-ish. */
export const STATIC_JOINS: Readonly<Partial<Record<CollectionSlug, readonly string[]>>> = {
  blogs: ['categories', 'tags'],
};

/** Fields a create must carry. */
export const REQUIRED_ON_CREATE: Readonly<Partial<Record<CollectionSlug, readonly string[]>>> = {
  series: ['title'],
  posts: ['title'],
  blogs: ['title'],
  forms: ['title'],
  media: ['filename'],
};

/** Fields whose values must be unique within a tenant's collection. */
export const UNIQUE: Readonly<Partial<Record<CollectionSlug, string>>> = {
  series: 'slug',
  posts: 'slug',
  blogs: 'slug',
  forms: 'slug',
  seasons: 'slug',
  pages: 'slug',
  events: 'slug',
  venues: 'slug',
  organizations: 'slug',
  media: 'filename',
};

/** Fields no write may set: the server owns them. */
export const SERVER_OWNED = new Set(['id', 'createdAt', 'updatedAt', 'tenant']);

export const ISO_RE = /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:?\d\d)$/;
