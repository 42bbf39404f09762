/**
 * The 13 collections of the Content Partners API and the routes the spec documents for each.
 * One table of facts shared by the simulator, the client, sync, the store and writes.
 */
export const COLLECTIONS = [
  'pages',
  'posts',
  'blogs',
  'seasons',
  'series',
  'events',
  'event-instances',
  'venues',
  'organizations',
  'media',
  'forms',
  'redirects',
  'custom-attributes',
] as const;
export type CollectionSlug = (typeof COLLECTIONS)[number];

export const isCollectionSlug = (s: string): s is CollectionSlug => (COLLECTIONS as readonly string[]).includes(s);

/** The SQLite table mirroring a collection: its path with `-` turned into `_`. */
export const tableFor = (c: CollectionSlug): string => c.replace(/-/g, '_');

type Snake<S extends string> = S extends `${infer A}-${infer B}` ? `${A}_${Snake<B>}` : S;
/** A collection as a user may name it: its API path (`event-instances`) or its table's name (`event_instances`). */
export type CollectionName = CollectionSlug | Snake<CollectionSlug>;

/** Every name a user may give a collection: its API path (`event-instances`) or its table's (`event_instances`). */
export const COLLECTION_NAMES = [...new Set(COLLECTIONS.flatMap((c) => [c, tableFor(c)]))] as readonly CollectionName[];

/**
 * The collection a user named, by its API path (`event-instances`) or its table's name (`event_instances`), as
 * `search` has always taken them; `undefined` when it names none. Every place a user names a collection asks this.
 */
export const collectionNamed = (name: string): CollectionSlug | undefined => {
  const slug = name.replace(/_/g, '-');
  return isCollectionSlug(slug) ? slug : undefined;
};

/** Collections whose records carry `_status` and may have a newer draft. */
export const VERSIONED: ReadonlySet<CollectionSlug> = new Set([
  'pages',
  'posts',
  'blogs',
  'seasons',
  'series',
  'organizations',
  'venues',
]);

/** The field a create can be found again by when its outcome is unknown. */
export const NATURAL_KEY: Partial<Record<CollectionSlug, string>> = {
  series: 'slug',
  posts: 'slug',
  blogs: 'slug',
  forms: 'slug',
  media: 'filename',
};

export type RouteOp = 'list' | 'get' | 'create' | 'put' | 'patch' | 'delete';
export type BulkKind = 'custom-attributes' | 'theme-settings';

/** The data routes of the spec's table, per collection. */
export const DOCUMENTED_ROUTES: Readonly<Record<CollectionSlug, readonly RouteOp[]>> = {
  pages: ['get'],
  posts: ['get', 'create'],
  blogs: ['create'],
  seasons: ['get', 'put'],
  series: ['list', 'create'],
  events: ['list'],
  'event-instances': ['patch', 'delete'],
  venues: ['get'],
  organizations: ['list', 'put'],
  media: ['list', 'create', 'put'],
  forms: ['create'],
  redirects: ['put'],
  'custom-attributes': ['put'],
};

/** Bulk routes: `PATCH /{collection}/{kind}`. */
export const BULK_ROUTES: readonly { collection: CollectionSlug; kind: BulkKind }[] = [
  { collection: 'organizations', kind: 'custom-attributes' },
  { collection: 'series', kind: 'custom-attributes' },
  { collection: 'blogs', kind: 'theme-settings' },
];

/** Collections with a theme-settings schema route (`GET /{collection}/theme-settings/schema`). */
export const THEME_SCHEMA_COLLECTIONS: readonly CollectionSlug[] = ['events'];

export type RouteSet = 'documented' | 'full';

/**
 * The by-id and collection routes served for one collection under a route set: `full` is Payload's REST surface
 * (list, get, create, PATCH and DELETE by id) plus the spec's PUT routes.
 */
export const routesFor = (c: CollectionSlug, set: RouteSet): readonly RouteOp[] => {
  const documented = DOCUMENTED_ROUTES[c];
  if (set === 'documented') return documented;
  const extra: RouteOp[] = ['list', 'get', 'create', 'patch', 'delete'];
  return [...extra, ...documented.filter((op) => !extra.includes(op))];
};

/** Fields that creates of these collections, and PUTs of these, may not set (spec rule 1). */
export const FORBIDDEN_FIELDS = ['blocks', 'theme', 'themeSettings'] as const;
export const FORBIDDEN_ON: Readonly<Partial<Record<CollectionSlug, readonly RouteOp[]>>> = {
  series: ['create'],
  posts: ['create'],
  blogs: ['create'],
  seasons: ['put'],
  organizations: ['put'],
};

export const API_VERSION = '2026-02';
