import * as v from 'valibot';
import type { CollectionSlug } from '../vocabulary/collections.js';

/**
 * The spec's resource shapes ("Resources and their fields") for the collections understudy writes to, as valibot
 * schemas: the one source of the typed write bodies (`CreateBody`, `UpdateBody`), of the checks at enqueue (unknown
 * fields at every depth, value types) and of the job JSON Schema in docs/writes.md.
 *
 * Objects whose fields the spec lists are strict (a field it does not show is refused, unless the tenant's config
 * sets `writes.allowExtraFields`); objects and arrays "shown as {} or []" with no element shape given (blocks,
 * attributes, participants, keywords, …) take any JSON object. Every field is optional (the spec does not say which
 * are required) and may be null (Payload clears a field set to null).
 */

const opt = <T extends v.GenericSchema>(s: T) => v.optional(v.nullable(s));

/** A string field (the spec's default type). */
export const Text = v.string();
/** An ISO 8601 date-time (spec: `datetime`). */
export const DateTime = v.pipe(v.string(), v.description('ISO 8601 date-time'));
/**
 * A number: a JS number, or a `bigint` for an integer beyond 2^53 (kept exact to the upstream; a JS number that large
 * is refused at enqueue, as it may already have been rounded). JSON Schema: `number`.
 */
export const Num = v.union([v.number(), v.bigint()]);
/** A relationship: the related record's id (a populated record is taken too, as Payload takes it). */
export const Ref = v.union([v.string(), Num, v.record(v.string(), v.unknown())]);
/** A JSON object whose element shape the spec does not give. */
export const AnyObject = v.record(v.string(), v.unknown());
/** Rich text: Payload's editor state (an object), or a string. */
export const RichText = v.union([v.string(), AnyObject]);
/** A versioned record's status. */
export const Status = v.picklist(['draft', 'published']);

const text = opt(Text);
const dateTime = opt(DateTime);
const bool = opt(v.boolean());
const num = opt(Num);
const ref = opt(Ref);
const refs = opt(v.array(Ref));
const object = opt(AnyObject);
const objects = opt(v.array(AnyObject));
const rich = opt(RichText);
const recordId = opt(v.union([v.string(), Num]));
const strings = opt(v.array(v.string()));
const status = opt(Status);

/** The kinds of field the shapes are made of (named in the job JSON Schema's `$defs`). */
export const FIELD_KINDS = {
  text,
  dateTime,
  bool,
  num,
  ref,
  refs,
  object,
  objects,
  rich,
  recordId,
  strings,
  status,
} as const;

/** `meta` (Page, Post, Blog, Series): `title`, `description`, `canonical`, `image`. */
export const Meta = v.strictObject({ title: text, description: text, canonical: text, image: ref });
/** `theme`: an object with a `themeSettings` array. */
export const Theme = v.strictObject({ themeSettings: objects });
/** A link (Form `redirect`, Redirect `to`): `type` (value `reference` shown), `reference`, `url`. */
export const Link = v.strictObject({ type: text, reference: ref, url: text });

const common = { id: recordId, createdAt: dateTime, updatedAt: dateTime, tenant: ref };
const richField = <K extends string>(stem: K) =>
  ({ [stem]: text, [`rich${cap(stem)}`]: rich, [`rich${cap(stem)}_html`]: text }) as {
    [P in K | `rich${Capitalize<K>}` | `rich${Capitalize<K>}_html`]: P extends `rich${Capitalize<K>}`
      ? typeof rich
      : typeof text;
  };
const cap = (s: string) => `${s[0]?.toUpperCase() ?? ''}${s.slice(1)}`;
const publishing = {
  slug: text,
  publishedSlug: text,
  publishedRelativePath: text,
  createRedirect: bool,
  url: text,
  sharedWith: strings,
  _status: status,
};

const season = {
  ...common,
  ...richField('title'),
  ...richField('description'),
  startDate: dateTime,
  startDate_tz: text,
  endDate: dateTime,
  endDate_tz: text,
  events: object,
  layout: text,
  blocks: objects,
  theme: opt(Theme),
  attributes: objects,
  image: ref,
  shortId: text,
  baseSlug: text,
  primaryForTitle: bool,
  ...publishing,
};

export const SeasonShape = v.strictObject({
  ...season,
  slugLock: bool,
  ticketingA: opt(v.strictObject({ seasonId: text })),
});
/** "Same as Season with these differences: adds displayTitle, event-instances and meta; has no slugLock; ticketingA holds packageId." */
export const SeriesShape = v.strictObject({
  ...season,
  displayTitle: text,
  'event-instances': object,
  meta: opt(Meta),
  ticketingA: opt(v.strictObject({ packageId: text })),
});
export const PostShape = v.strictObject({
  ...common,
  ...richField('title'),
  ...richField('description'),
  layout: text,
  blocks: objects,
  attributes: objects,
  meta: opt(Meta),
  publishDate: dateTime,
  blog: ref,
  authors: refs,
  categories: refs,
  tags: refs,
  image: ref,
  showInSearch: bool,
  ...publishing,
});
export const BlogShape = v.strictObject({
  ...common,
  ...richField('title'),
  ...richField('description'),
  layout: text,
  blocks: objects,
  posts: object,
  theme: opt(Theme),
  meta: opt(Meta),
  categories: object,
  tags: object,
  image: ref,
  ...publishing,
});
export const OrganizationShape = v.strictObject({
  ...common,
  ...richField('name'),
  ...richField('description'),
  type: text,
  layout: text,
  blocks: objects,
  theme: opt(Theme),
  attributes: objects,
  slugLock: bool,
  image: ref,
  ...publishing,
});
export const MediaShape = v.strictObject({
  createdAt: dateTime,
  updatedAt: dateTime,
  alt: text,
  caption: text,
  credit: text,
  filename: text,
  focalX: num,
  focalY: num,
  height: num,
  width: num,
  prefix: text,
  src: text,
  url: text,
});
const ticketingOverride = { customAttributeSyncOverride: object };
export const EventInstanceShape = v.strictObject({
  event: ref,
  startDate: dateTime,
  startDate_tz: text,
  startDateLocalAsUTC: text,
  ticketingSystemId: text,
  participants: objects,
  attributes: objects,
  venue: ref,
  series: refs,
  booking: opt(v.strictObject({ bookingLinkLabel: text, bookingLinkURL: text })),
  ticketingA: opt(
    v.strictObject({
      performanceId: text,
      productionSeasonId: text,
      keywords: object,
      availability: text,
      availSaleIndicator: text,
      publishWebApiStartDate: dateTime,
      publishWebApiEndDate: dateTime,
      ...ticketingOverride,
    }),
  ),
  ticketingB: opt(v.strictObject({ showTimeId: text, eventId: text, eventUrlName: text, ...ticketingOverride })),
  ticketingC: opt(v.strictObject({ instanceId: text, eventId: text, ...ticketingOverride })),
});
export const FormShape = v.strictObject({
  confirmationMessage: rich,
  confirmationType: text,
  fields: objects,
  redirect: opt(Link),
  slug: text,
  submitButtonLabel: text,
  tenant: ref,
  title: text,
});
export const RedirectShape = v.strictObject({ ...common, from: text, matchType: text, to: opt(Link) });
export const CustomAttributesShape = v.strictObject({
  ...common,
  EventsAttributes: objects,
  EventInstancesAttributes: objects,
  PostsAttributes: objects,
  SeasonsAttributes: objects,
  SeriesAttributes: objects,
  WorksAttributes: objects,
  VenuesAttributes: objects,
  OrganizationsAttributes: objects,
  PeopleAttributes: objects,
});

/** The shape of each collection understudy writes to. */
export const RESOURCE_SHAPES = {
  seasons: SeasonShape,
  series: SeriesShape,
  posts: PostShape,
  blogs: BlogShape,
  organizations: OrganizationShape,
  media: MediaShape,
  'event-instances': EventInstanceShape,
  forms: FormShape,
  redirects: RedirectShape,
  'custom-attributes': CustomAttributesShape,
} as const satisfies Partial<Record<CollectionSlug, v.GenericSchema>>;

/** The top-level fields of each shape. */
export const RESOURCE_FIELDS: Readonly<Partial<Record<CollectionSlug, ReadonlySet<string>>>> = Object.fromEntries(
  Object.entries(RESOURCE_SHAPES).map(([c, s]) => [c, new Set(Object.keys(s.entries))]),
);
