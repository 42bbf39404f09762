/**
 * Types of the records the Content Partners API returns, one per resource of the spec. They describe what
 * the upstream sends, not what it promises: every field but the common ones is optional and may be null,
 * and relationship fields hold an id or, populated (`depth`, `populate`), the related record.
 * Element shapes the spec leaves open (`blocks`, `attributes`, `participants`, …) are `JsonObject`.
 */

import type { CollectionSlug } from '../vocabulary/collections.js';
import type { JsonObject, JsonValue } from '../vocabulary/ids.js';
import type { ListPage } from './partners-client.js';

/** A relationship: an id (string or number, as the upstream sends it) or the populated record. */
export type Ref<T> = string | number | T;

/** A field the upstream may leave out or send as null. */
type Opt<T> = T | null | undefined;

/** ISO 8601 date-time. */
export type DateTime = string;

/** A joined field (`joins`): a page of related records. */
export interface Joined<T> {
  readonly docs?: Ref<T>[];
  readonly hasNextPage?: boolean;
  readonly totalDocs?: number;
}

export interface TenantRecord extends JsonObject {
  readonly id: string;
  readonly slug: string;
}

export type DraftStatus = 'draft' | 'published' | (string & {});

export interface ThemeSettings {
  readonly themeSettings?: Opt<JsonObject[]>;
}

export interface Meta {
  readonly title?: Opt<string>;
  readonly description?: Opt<string>;
  readonly canonical?: Opt<string>;
  readonly image?: Opt<Ref<Media>>;
}

/** `id`, `createdAt`, `updatedAt`, `tenant`: common to every collection but Media, Form and Event Instance. */
export interface CommonFields {
  readonly id: string | number;
  readonly createdAt: DateTime;
  readonly updatedAt: DateTime;
  readonly tenant?: Opt<Ref<TenantRecord>>;
}

interface RichTitle {
  readonly title?: Opt<string>;
  readonly richTitle?: Opt<JsonValue>;
  readonly richTitle_html?: Opt<string>;
}
interface RichDescription {
  readonly description?: Opt<string>;
  readonly richDescription?: Opt<JsonValue>;
  readonly richDescription_html?: Opt<string>;
}
interface Published {
  readonly slug?: Opt<string>;
  readonly publishedSlug?: Opt<string>;
  readonly publishedRelativePath?: Opt<string>;
  readonly createRedirect?: Opt<boolean>;
  readonly url?: Opt<string>;
  readonly sharedWith?: Opt<string[]>;
  readonly _status?: Opt<DraftStatus>;
}
interface Layout {
  readonly layout?: Opt<string>;
  readonly blocks?: Opt<JsonObject[]>;
}

export interface Page extends CommonFields, RichTitle, RichDescription, Published {
  readonly theme?: Opt<ThemeSettings>;
  readonly meta?: Opt<Meta>;
  readonly relativePath?: Opt<string>;
  readonly displayTitle?: Opt<string>;
  readonly image?: Opt<Ref<Media>>;
  readonly parent?: Opt<Ref<Page>>;
  readonly order?: Opt<number>;
  readonly showInNavigation?: Opt<boolean>;
  readonly showInSearch?: Opt<boolean>;
  readonly themeTemplate?: Opt<string>;
  readonly breadcrumbs?: Opt<JsonObject[]>;
  readonly publishedAt?: Opt<DateTime>;
}

export interface Post extends CommonFields, RichTitle, RichDescription, Layout, Published {
  readonly attributes?: Opt<JsonObject[]>;
  readonly meta?: Opt<Meta>;
  readonly publishDate?: Opt<DateTime>;
  readonly blog?: Opt<Ref<Blog>>;
  readonly authors?: Opt<Ref<JsonObject>[]>;
  readonly categories?: Opt<Ref<JsonObject>[]>;
  readonly tags?: Opt<Ref<JsonObject>[]>;
  readonly image?: Opt<Ref<Media>>;
  readonly showInSearch?: Opt<boolean>;
}

export interface Blog extends CommonFields, RichTitle, RichDescription, Layout, Published {
  readonly posts?: Opt<Joined<Post>>;
  readonly theme?: Opt<ThemeSettings>;
  readonly meta?: Opt<Meta>;
  readonly categories?: Opt<Joined<JsonObject>>;
  readonly tags?: Opt<Joined<JsonObject>>;
  readonly image?: Opt<Ref<Media>>;
}

interface SeasonLike extends CommonFields, RichTitle, RichDescription, Layout, Published {
  readonly startDate?: Opt<DateTime>;
  readonly startDate_tz?: Opt<string>;
  readonly endDate?: Opt<DateTime>;
  readonly endDate_tz?: Opt<string>;
  readonly events?: Opt<Joined<Event>>;
  readonly theme?: Opt<ThemeSettings>;
  readonly attributes?: Opt<JsonObject[]>;
  readonly image?: Opt<Ref<Media>>;
  readonly shortId?: Opt<string>;
  readonly baseSlug?: Opt<string>;
  readonly primaryForTitle?: Opt<boolean>;
}

export interface Season extends SeasonLike {
  readonly slugLock?: Opt<boolean>;
  readonly ticketingA?: Opt<{ readonly seasonId?: Opt<string> }>;
}

export interface Series extends SeasonLike {
  readonly displayTitle?: Opt<string>;
  readonly 'event-instances'?: Opt<Joined<EventInstance>>;
  readonly meta?: Opt<Meta>;
  readonly ticketingA?: Opt<{ readonly packageId?: Opt<string> }>;
}

/** The spec does not show Event fields; this is the shape upstreams are known to send. */
export interface Event extends CommonFields, RichDescription {
  readonly title?: Opt<string>;
  readonly slug?: Opt<string>;
  readonly startDate?: Opt<DateTime>;
  readonly startDate_tz?: Opt<string>;
  readonly endDate?: Opt<DateTime>;
  readonly season?: Opt<Ref<Season>>;
  readonly series?: Opt<Ref<Series>[]>;
  readonly venue?: Opt<Ref<Venue>>;
  readonly organization?: Opt<Ref<Organization>>;
  readonly image?: Opt<Ref<Media>>;
  readonly url?: Opt<string>;
  readonly attributes?: Opt<JsonObject[]>;
  readonly theme?: Opt<ThemeSettings>;
  readonly 'event-instances'?: Opt<Joined<EventInstance>>;
}

interface SyncOverride {
  readonly customAttributeSyncOverride?: Opt<JsonObject>;
}

export interface TicketingA extends SyncOverride {
  readonly performanceId?: Opt<string>;
  readonly productionSeasonId?: Opt<string>;
  readonly keywords?: Opt<JsonObject>;
  readonly availability?: Opt<string>;
  readonly availSaleIndicator?: Opt<string>;
  readonly publishWebApiStartDate?: Opt<DateTime>;
  readonly publishWebApiEndDate?: Opt<DateTime>;
}
export interface TicketingB extends SyncOverride {
  readonly showTimeId?: Opt<string>;
  readonly eventId?: Opt<string>;
  readonly eventUrlName?: Opt<string>;
}
export interface TicketingC extends SyncOverride {
  readonly instanceId?: Opt<string>;
  readonly eventId?: Opt<string>;
}

/** The spec shows no `id`/timestamps on Event Instances; upstreams send them, so they are optional here. */
export interface EventInstance extends Partial<CommonFields> {
  readonly event?: Opt<Ref<Event>>;
  readonly startDate?: Opt<DateTime>;
  readonly startDate_tz?: Opt<string>;
  readonly startDateLocalAsUTC?: Opt<string>;
  readonly ticketingSystemId?: Opt<string>;
  readonly participants?: Opt<JsonObject[]>;
  readonly attributes?: Opt<JsonObject[]>;
  readonly venue?: Opt<Ref<Venue>>;
  readonly series?: Opt<Ref<Series>[]>;
  readonly booking?: Opt<{ readonly bookingLinkLabel?: Opt<string>; readonly bookingLinkURL?: Opt<string> }>;
  readonly ticketingA?: Opt<TicketingA>;
  readonly ticketingB?: Opt<TicketingB>;
  readonly ticketingC?: Opt<TicketingC>;
}

export interface OpeningHours {
  readonly timezone?: Opt<string>;
  readonly sections?: Opt<JsonObject[]>;
  readonly exceptions?: Opt<JsonObject[]>;
  readonly notes?: Opt<string>;
}

export interface Venue extends CommonFields, RichTitle, RichDescription, Layout, Published {
  readonly website?: Opt<string>;
  readonly country?: Opt<string>;
  readonly addressLine1?: Opt<string>;
  readonly addressLine2?: Opt<string>;
  readonly city?: Opt<string>;
  readonly state?: Opt<string>;
  readonly postalCode?: Opt<string>;
  readonly directions?: Opt<string>;
  readonly openingHours?: Opt<OpeningHours>;
  readonly attributes?: Opt<JsonObject[]>;
  readonly slugLock?: Opt<boolean>;
  readonly image?: Opt<Ref<Media>>;
}

export interface Organization extends CommonFields, RichDescription, Layout, Published {
  readonly name?: Opt<string>;
  readonly richName?: Opt<JsonValue>;
  readonly richName_html?: Opt<string>;
  readonly type?: Opt<'producer' | (string & {})>;
  readonly theme?: Opt<ThemeSettings>;
  readonly attributes?: Opt<JsonObject[]>;
  readonly slugLock?: Opt<boolean>;
  readonly image?: Opt<Ref<Media>>;
}

/** Media metadata. The spec shows no `id`: records are keyed by `filename`. */
export interface Media {
  readonly id?: string | number;
  readonly createdAt?: DateTime;
  readonly updatedAt?: DateTime;
  readonly alt?: Opt<string>;
  readonly caption?: Opt<string>;
  readonly credit?: Opt<string>;
  readonly filename?: Opt<string>;
  readonly focalX?: Opt<number>;
  readonly focalY?: Opt<number>;
  readonly height?: Opt<number>;
  readonly width?: Opt<number>;
  readonly prefix?: Opt<string>;
  readonly src?: Opt<string>;
  readonly url?: Opt<string>;
}

export interface LinkTarget {
  readonly type?: Opt<'reference' | 'custom' | (string & {})>;
  readonly reference?: Opt<Ref<JsonObject> | JsonObject>;
  readonly url?: Opt<string>;
}

export interface Form extends Partial<CommonFields> {
  readonly confirmationMessage?: Opt<JsonValue>;
  readonly confirmationType?: Opt<'message' | (string & {})>;
  readonly fields?: Opt<JsonObject[]>;
  readonly redirect?: Opt<LinkTarget>;
  readonly slug?: Opt<string>;
  readonly submitButtonLabel?: Opt<string>;
  readonly title?: Opt<string>;
}

export interface Redirect extends CommonFields {
  readonly from?: Opt<string>;
  readonly matchType?: Opt<'exact' | (string & {})>;
  readonly to?: Opt<LinkTarget>;
}

/** One record per tenant. */
export interface CustomAttribute extends CommonFields {
  readonly EventsAttributes?: Opt<JsonObject[]>;
  readonly EventInstancesAttributes?: Opt<JsonObject[]>;
  readonly PostsAttributes?: Opt<JsonObject[]>;
  readonly SeasonsAttributes?: Opt<JsonObject[]>;
  readonly SeriesAttributes?: Opt<JsonObject[]>;
  readonly WorksAttributes?: Opt<JsonObject[]>;
  readonly VenuesAttributes?: Opt<JsonObject[]>;
  readonly OrganizationsAttributes?: Opt<JsonObject[]>;
  readonly PeopleAttributes?: Opt<JsonObject[]>;
}

export interface ThemeSettingsField {
  readonly key: string;
  readonly type: string;
  readonly label?: Opt<string>;
  readonly hasMany?: Opt<boolean>;
  readonly relationTo?: Opt<string>;
  readonly options?: Opt<{ readonly value: string | null; readonly label?: Opt<string> }[]>;
  readonly fields?: Opt<ThemeSettingsField[]>;
  readonly customObjectType?: Opt<string>;
}

/** Response of `GET /{collection}/theme-settings/schema`. */
export interface ThemeSettingsSchemaRecord {
  readonly collection: string;
  readonly configurationAvailable: boolean;
  readonly template?: Opt<string>;
  readonly reason?: Opt<string>;
  readonly fields: ThemeSettingsField[];
}

/** The paginated list envelope as the spec describes it, with typed records: the client's `ListPage` shape. */
export type ListEnvelope<T> = Omit<ListPage, 'docs'> & { readonly docs: T[] };

/** The bulk set/unset answer. */
export interface BulkRecordResult {
  readonly id: string;
  readonly status: 'updated' | (string & {});
  readonly set?: string[];
  readonly unset?: string[];
  readonly draftSync?: {
    readonly status?: string;
    readonly set?: string[];
    readonly unset?: string[];
    readonly error?: Opt<string | JsonObject>;
  };
  readonly error?: Opt<{ readonly message: string; readonly status: number }>;
}

/** The record type of each collection. */
export interface CollectionRecord {
  pages: Page;
  posts: Post;
  blogs: Blog;
  seasons: Season;
  series: Series;
  events: Event;
  'event-instances': EventInstance;
  venues: Venue;
  organizations: Organization;
  media: Media;
  forms: Form;
  redirects: Redirect;
  'custom-attributes': CustomAttribute;
}

// Compile-time check: every collection has a record type and nothing else does.
type Exact<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const _everyCollection: Exact<keyof CollectionRecord, CollectionSlug> = true;
void _everyCollection;
