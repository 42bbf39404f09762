import type { CollectionSlug } from '../vocabulary/collections.js';

/**
 * How a typed column is read out of a record:
 * - `text`: a string, or a number/boolean turned into its string form;
 * - `ref`: a relationship, sent as an id (string or number) or as a populated object whose `.id` is taken;
 * - `datetime`: an ISO 8601 instant, stored normalised to UTC (`2026-03-01T19:30:00.000Z`) so it sorts and compares;
 * - `integer` / `real`: a number;
 * - `local`: the instant at `path` as local wall-clock time in the IANA zone found at the first of `zone` present,
 *   with its UTC offset (`2025-10-23T19:30:00-07:00`), computed when the row is written; null without both.
 */
export type ColumnKind = 'text' | 'ref' | 'datetime' | 'integer' | 'real' | 'local';

export interface TypedColumn {
  /** The SQL column name (snake_case). */
  readonly column: string;
  readonly kind: ColumnKind;
  /** Dot path into the record (`ticketingA.availability`). */
  readonly path: string;
  /** For `local` columns: dot paths of the time zone, the first one present wins. */
  readonly zone?: readonly string[];
}

const title: TypedColumn = { column: 'title', kind: 'text', path: 'title' };
const slug: TypedColumn = { column: 'slug', kind: 'text', path: 'slug' };
const status: TypedColumn = { column: 'status', kind: 'text', path: '_status' };
const url: TypedColumn = { column: 'url', kind: 'text', path: 'url' };
const dates: readonly TypedColumn[] = [
  { column: 'start_date', kind: 'datetime', path: 'startDate' },
  { column: 'start_date_tz', kind: 'text', path: 'startDate_tz' },
  { column: 'end_date', kind: 'datetime', path: 'endDate' },
  { column: 'end_date_tz', kind: 'text', path: 'endDate_tz' },
];
const startLocal: TypedColumn = { column: 'start_local', kind: 'local', path: 'startDate', zone: ['startDate_tz'] };
// Upstream often sends endDate without endDate_tz: a run ends where it starts.
const endLocal: TypedColumn = {
  column: 'end_local',
  kind: 'local',
  path: 'endDate',
  zone: ['endDate_tz', 'startDate_tz'],
};

/**
 * The typed columns of each collection table, extracted from `doc` at every upsert. One table of facts used by
 * the upsert code; the migrations that add them hold frozen copies (migrations must not follow today's code).
 * Adding a column here needs a new migration that adds it.
 */
export const TYPED_COLUMNS: Readonly<Record<CollectionSlug, readonly TypedColumn[]>> = {
  pages: [
    title,
    slug,
    status,
    { column: 'parent_id', kind: 'ref', path: 'parent' },
    { column: 'relative_path', kind: 'text', path: 'relativePath' },
    { column: 'published_at', kind: 'datetime', path: 'publishedAt' },
    url,
  ],
  posts: [
    title,
    slug,
    status,
    { column: 'blog_id', kind: 'ref', path: 'blog' },
    { column: 'publish_date', kind: 'datetime', path: 'publishDate' },
    url,
  ],
  blogs: [title, slug, status, url],
  seasons: [title, slug, status, ...dates, url, startLocal, endLocal],
  series: [
    title,
    slug,
    status,
    ...dates,
    { column: 'season_id', kind: 'ref', path: 'season' },
    url,
    startLocal,
    endLocal,
  ],
  events: [
    title,
    slug,
    status,
    ...dates,
    { column: 'season_id', kind: 'ref', path: 'season' },
    { column: 'venue_id', kind: 'ref', path: 'venue' },
    { column: 'organization_id', kind: 'ref', path: 'organization' },
    url,
    startLocal,
    endLocal,
  ],
  'event-instances': [
    { column: 'event_id', kind: 'ref', path: 'event' },
    { column: 'venue_id', kind: 'ref', path: 'venue' },
    { column: 'start_date', kind: 'datetime', path: 'startDate' },
    { column: 'start_date_tz', kind: 'text', path: 'startDate_tz' },
    { column: 'ticketing_system_id', kind: 'text', path: 'ticketingSystemId' },
    { column: 'availability', kind: 'text', path: 'ticketingA.availability' },
    { column: 'booking_url', kind: 'text', path: 'booking.bookingLinkURL' },
    startLocal,
    endLocal,
  ],
  venues: [
    title,
    slug,
    status,
    { column: 'city', kind: 'text', path: 'city' },
    { column: 'country', kind: 'text', path: 'country' },
    url,
  ],
  organizations: [
    { column: 'name', kind: 'text', path: 'name' },
    slug,
    status,
    { column: 'type', kind: 'text', path: 'type' },
    url,
  ],
  media: [
    { column: 'filename', kind: 'text', path: 'filename' },
    { column: 'url', kind: 'text', path: 'url' },
    { column: 'alt', kind: 'text', path: 'alt' },
    { column: 'width', kind: 'integer', path: 'width' },
    { column: 'height', kind: 'integer', path: 'height' },
  ],
  forms: [title, slug],
  redirects: [
    { column: 'from_path', kind: 'text', path: 'from' },
    { column: 'match_type', kind: 'text', path: 'matchType' },
    { column: 'to_url', kind: 'text', path: 'to.url' },
    { column: 'to_reference_id', kind: 'ref', path: 'to.reference' },
  ],
  'custom-attributes': [],
};
