import type { CollectionSlug } from '../vocabulary/collections.js';
import type { JsonObject, JsonValue } from '../vocabulary/ids.js';
import type { IdMaker, Prng } from './prng.js';
import { DESCRIPTIONS, DESCRIPTIONS_FR, WORKS } from './sim-word-lists.js';

// The pieces every generated record is built from: the generator context, instants, slugs and shared sub-objects.

/** What a record generator needs: randomness, ids, time stamps and ids of already generated records. */
export interface GenContext {
  readonly prng: Prng;
  readonly ids: IdMaker;
  readonly tenant: string;
  readonly tenantName: string;
  /** The public website of the tenant (page and record `url`s point there). */
  readonly site: string;
  /** The fixed epoch derived from the seed: generated future dates are relative to it. */
  readonly epochMs: number;
  /** `createdAt`/`updatedAt` (ms) for the next record. */
  stamps(): { createdAt: number; updatedAt: number };
  /** The id of a random existing record of a collection, or null if there is none. */
  ref(collection: CollectionSlug): string | null;
}

const isoCache = new Map<number, string>();
/** ISO 8601 with milliseconds and Z; generated data repeat instants a lot, so equal ones share one string. */
export const iso = (ms: number): string => {
  let s = isoCache.get(ms);
  if (s === undefined) {
    s = new Date(ms).toISOString();
    if (isoCache.size < 300_000) isoCache.set(ms, s);
  }
  return s;
};

const slugCache = new Map<string, string>();
export const slugify = (s: string): string => {
  let hit = slugCache.get(s);
  if (hit === undefined) {
    hit = s
      .normalize('NFD')
      .replace(/[\u0300-\u036f]/g, '')
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '');
    if (slugCache.size < 10_000) slugCache.set(s, hit);
  }
  return hit;
};

// Stored documents are never changed in place (every write clones first), so equal sub-objects are shared:
// that keeps 100,000 records per tenant cheap to build and to hold.
const shared = new Map<string, JsonValue>();
export const intern = <T extends JsonValue>(key: string, make: () => T): T => {
  let v = shared.get(key);
  if (v === undefined) {
    v = make();
    if (shared.size < 200_000) shared.set(key, v);
  }
  return v as T;
};
export const loc = (en: string, fr: string | null): JsonObject =>
  intern(`l|${en}|${fr}`, () => (fr === null ? { en } : { en, fr }));
export const rich = (text: string): JsonObject =>
  intern(`r|${text}`, () => ({
    root: {
      type: 'root',
      version: 1,
      children: [{ type: 'paragraph', version: 1, children: [{ type: 'text', version: 1, text }] }],
    },
  }));
export const html = (text: string): string =>
  intern(`h|${text}`, () => `<p>${text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')}</p>`);
export const EMPTY_OBJ: JsonObject = {};
export const NO_SHARES: JsonValue[] = [];

export const description = (prng: Prng): JsonObject => {
  const i = prng.int(0, DESCRIPTIONS.length - 1);
  return loc(DESCRIPTIONS[i] as string, DESCRIPTIONS_FR[i] ?? null);
};

export const THEME_DEFAULT: JsonObject = { themeSettings: [] };
export const themeDefault = (): JsonObject => THEME_DEFAULT;
export const meta = (g: GenContext, title: string, path: string, image: string | null): JsonObject => ({
  title: `${title} | ${g.tenantName}`,
  description: `${title} at ${g.tenantName}.`,
  canonical: `${g.site}${path}`,
  image,
});
export const blocks = (g: GenContext, text: string): JsonValue[] => [
  { id: g.ids.make(g.epochMs), blockType: 'richText', content_html: html(text) },
];
export const common = (g: GenContext): { id: string; createdAt: string; updatedAt: string; tenant: string } => {
  const t = g.stamps();
  return { id: g.ids.make(t.createdAt), createdAt: iso(t.createdAt), updatedAt: iso(t.updatedAt), tenant: g.tenant };
};
export const status = (g: GenContext): string => (g.prng.chance(0.9) ? 'published' : 'draft');
export const imageRef = (g: GenContext): string | null => (g.prng.chance(0.85) ? g.ref('media') : null);
export const attrs = (g: GenContext, keys: readonly [string, readonly JsonValue[]][]): JsonValue[] =>
  keys
    .filter(() => g.prng.chance(0.4))
    .map(([key, values]) => {
      const value = g.prng.pick(values);
      return intern(`a|${key}|${String(value)}`, () => ({ key, value }));
    });

export const person = (role: string, name: string): JsonObject => intern(`p|${role}|${name}`, () => ({ role, name }));

export type Generator = (g: GenContext, i: number) => JsonObject;

export const workTitle = (_g: GenContext, i: number): [string, string | null] => {
  const w = WORKS[i % WORKS.length] as readonly [string, string | null];
  return [w[0], w[1]];
};
