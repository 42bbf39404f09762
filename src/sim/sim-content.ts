import type { CollectionSlug } from '../vocabulary/collections.js';
import type { JsonObject, JsonValue } from '../vocabulary/ids.js';
import type { IdMaker, Prng } from './prng.js';

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

const WORKS: readonly (readonly [string, string | null])[] = [
  ['The Magic Flute', 'La Flûte enchantée'],
  ['La Bohème', 'La Bohème'],
  ['Swan Lake', 'Le Lac des cygnes'],
  ['Hamlet', 'Hamlet'],
  ['The Nutcracker', 'Casse-Noisette'],
  ['Carmen', 'Carmen'],
  ['Giselle', 'Giselle'],
  ["A Midsummer Night's Dream", "Le Songe d'une nuit d'été"],
  ['The Cherry Orchard', 'La Cerisaie'],
  ['Tosca', null],
  ['Don Giovanni', null],
  ['Romeo and Juliet', 'Roméo et Juliette'],
  ['The Seagull', 'La Mouette'],
  ['Macbeth', null],
  ['Coppélia', 'Coppélia'],
  ['The Marriage of Figaro', 'Les Noces de Figaro'],
  ['Uncle Vanya', 'Oncle Vania'],
  ['Twelfth Night', 'La Nuit des rois'],
  ['Rigoletto', null],
  ['Madama Butterfly', null],
  ['The Tempest', 'La Tempête'],
  ['Peer Gynt', null],
  ['Eugene Onegin', 'Eugène Onéguine'],
  ['Fidelio', null],
  ['Dido and Aeneas', 'Didon et Énée'],
  ['The Firebird', "L'Oiseau de feu"],
  ['Petrushka', 'Petrouchka'],
  ['Hedda Gabler', null],
  ["A Doll's House", 'Une maison de poupée'],
  ['The Rite of Spring', 'Le Sacre du printemps'],
  ['Gianni Schicchi', null],
  ['La Traviata', null],
  ['The Pirates of Penzance', null],
  ['Cinderella', 'Cendrillon'],
  ['The Sleeping Beauty', 'La Belle au bois dormant'],
  ['Messiah', 'Le Messie'],
];
const SERIES_NAMES = [
  'Opera Essentials',
  'Ballet at the Harbour',
  'Chamber Sundays',
  'New Voices',
  'Family Matinees',
  'Late Night Jazz',
  'Shakespeare Unbound',
  'Contemporary Dance',
  'Baroque Evenings',
  'Symphonic Highlights',
  'Studio Premieres',
  'Gala Nights',
];
const PEOPLE = [
  'Amara Okafor',
  'Lucien Moreau',
  'Hannah Whitfield',
  'Kenji Tanaka',
  'Sofia Marchetti',
  'Daniel Kowalski',
  'Priya Raman',
  'Élodie Laurent',
  'Marcus Bell',
  'Ingrid Solberg',
  'Tomás Álvarez',
  'Grace Adeyemi',
];
const ROLES = ['Conductor', 'Director', 'Choreographer', 'Soloist', 'Designer', 'Lighting Designer'];
const ORG_WORDS = ['Ensemble', 'Company', 'Collective', 'Players', 'Quartet', 'Chorus', 'Orchestra', 'Dance Theatre'];
const ORG_PLACES = ['Harbour', 'Northern', 'Riverside', 'Meridian', 'Lantern', 'Silver Birch', 'Eastgate', 'Aurora'];
const VENUE_WORDS = ['Theatre', 'Opera House', 'Concert Hall', 'Studio', 'Playhouse', 'Music Room', 'Pavilion'];
const BLOG_NAMES = ['Backstage', 'Programme Notes', 'From the Pit', 'Company News', 'Rehearsal Diaries', 'Learning'];
const PAGE_NAMES = [
  'About',
  'Plan your visit',
  'Access',
  'Support us',
  'Membership',
  'Education',
  'Contact',
  'History',
  'Our people',
  'Hire a space',
  'Press',
  'Careers',
];
const POST_TOPICS = [
  'Meet the cast of',
  'Five things to know about',
  'Behind the scenes of',
  'Designing',
  'A conductor on',
  'Why we are staging',
  'Rehearsal notes:',
];
const CATEGORY_WORDS = ['Design', 'Music', 'Dance', 'Community', 'Heritage', 'Wildlife', 'Architecture', 'Rehearsal'];

interface City {
  city: string;
  country: string;
  state: string;
  tz: string;
  postal: () => string;
  street: readonly string[];
}
const CITIES = (prng: Prng): readonly City[] => [
  {
    city: 'London',
    country: 'GB',
    state: '',
    tz: 'Europe/London',
    postal: () => `SE1 ${prng.int(1, 9)}${prng.pick(['AB', 'NT', 'XZ', 'PL'])}`,
    street: ['Waterloo Road', 'The Cut', 'Upper Ground', 'Floral Street'],
  },
  {
    city: 'Manchester',
    country: 'GB',
    state: '',
    tz: 'Europe/London',
    postal: () => `M${prng.int(1, 4)} ${prng.int(1, 9)}BN`,
    street: ['Quay Street', 'Peter Street', 'Oxford Road'],
  },
  {
    city: 'New York',
    country: 'US',
    state: 'NY',
    tz: 'America/New_York',
    postal: () => `100${prng.int(10, 40)}`,
    street: ['Broadway', 'West 65th Street', 'Lafayette Street'],
  },
  {
    city: 'Chicago',
    country: 'US',
    state: 'IL',
    tz: 'America/Chicago',
    postal: () => `606${prng.int(0, 9)}${prng.int(0, 9)}`,
    street: ['North Wacker Drive', 'South Michigan Avenue'],
  },
  {
    city: 'Los Angeles',
    country: 'US',
    state: 'CA',
    tz: 'America/Los_Angeles',
    postal: () => `900${prng.int(10, 99)}`,
    street: ['Grand Avenue', 'South Hope Street'],
  },
  {
    city: 'Paris',
    country: 'FR',
    state: '',
    tz: 'Europe/Paris',
    postal: () => `750${String(prng.int(1, 20)).padStart(2, '0')}`,
    street: ["Place de l'Opéra", 'Rue de Lyon', 'Boulevard Saint-Michel'],
  },
  {
    city: 'Montréal',
    country: 'CA',
    state: 'QC',
    tz: 'America/Toronto',
    postal: () => `H2X ${prng.int(1, 9)}Y${prng.int(1, 9)}`,
    street: ['Rue Sainte-Catherine Ouest', 'Boulevard Saint-Laurent'],
  },
  {
    city: 'Sydney',
    country: 'AU',
    state: 'NSW',
    tz: 'Australia/Sydney',
    postal: () => '2000',
    street: ['Bennelong Point', 'George Street'],
  },
];

const slugCache = new Map<string, string>();
const slugify = (s: string): string => {
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

export { slugify };

// Stored documents are never changed in place (every write clones first), so equal sub-objects are shared:
// that keeps 100,000 records per tenant cheap to build and to hold.
const shared = new Map<string, JsonValue>();
const intern = <T extends JsonValue>(key: string, make: () => T): T => {
  let v = shared.get(key);
  if (v === undefined) {
    v = make();
    if (shared.size < 200_000) shared.set(key, v);
  }
  return v as T;
};
const loc = (en: string, fr: string | null): JsonObject =>
  intern(`l|${en}|${fr}`, () => (fr === null ? { en } : { en, fr }));
const rich = (text: string): JsonObject =>
  intern(`r|${text}`, () => ({
    root: {
      type: 'root',
      version: 1,
      children: [{ type: 'paragraph', version: 1, children: [{ type: 'text', version: 1, text }] }],
    },
  }));
const html = (text: string): string =>
  intern(`h|${text}`, () => `<p>${text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')}</p>`);
const EMPTY_OBJ: JsonObject = {};
const NO_SHARES: JsonValue[] = [];

const DESCRIPTIONS = [
  'A new production with a stellar cast and live orchestra.',
  'Returning by popular demand after a sold-out run.',
  'An intimate staging that brings the audience close to the action.',
  'Sung in the original language with surtitles.',
  'Suitable for ages 8 and up; running time about two hours with one interval.',
  'A co-production with partners across three countries.',
];
const DESCRIPTIONS_FR = [
  'Une nouvelle production avec une distribution éclatante et un orchestre live.',
  'De retour à la demande générale après des représentations complètes.',
  null,
  'Chanté en langue originale avec surtitres.',
  null,
  'Une coproduction avec des partenaires de trois pays.',
];
const description = (prng: Prng): JsonObject => {
  const i = prng.int(0, DESCRIPTIONS.length - 1);
  return loc(DESCRIPTIONS[i] as string, DESCRIPTIONS_FR[i] ?? null);
};

const THEME_DEFAULT: JsonObject = { themeSettings: [] };
const themeDefault = (): JsonObject => THEME_DEFAULT;
const meta = (g: GenContext, title: string, path: string, image: string | null): JsonObject => ({
  title: `${title} | ${g.tenantName}`,
  description: `${title} at ${g.tenantName}.`,
  canonical: `${g.site}${path}`,
  image,
});
const blocks = (g: GenContext, text: string): JsonValue[] => [
  { id: g.ids.make(g.epochMs), blockType: 'richText', content_html: html(text) },
];
const common = (g: GenContext): { id: string; createdAt: string; updatedAt: string; tenant: string } => {
  const t = g.stamps();
  return { id: g.ids.make(t.createdAt), createdAt: iso(t.createdAt), updatedAt: iso(t.updatedAt), tenant: g.tenant };
};
const status = (g: GenContext): string => (g.prng.chance(0.9) ? 'published' : 'draft');
const imageRef = (g: GenContext): string | null => (g.prng.chance(0.85) ? g.ref('media') : null);
const attrs = (g: GenContext, keys: readonly [string, readonly JsonValue[]][]): JsonValue[] =>
  keys
    .filter(() => g.prng.chance(0.4))
    .map(([key, values]) => {
      const value = g.prng.pick(values);
      return intern(`a|${key}|${String(value)}`, () => ({ key, value }));
    });

// Offsets of a time zone, cached per zone and UTC day (the day's offset at noon is good enough for a generator).
const offsetCache = new Map<string, number>();
const formatters = new Map<string, Intl.DateTimeFormat>();
const tzOffsetMs = (tz: string, utcMs: number): number => {
  const day = Math.floor(utcMs / 86_400_000);
  const key = `${tz}|${day}`;
  const hit = offsetCache.get(key);
  if (hit !== undefined) return hit;
  let fmt = formatters.get(tz);
  if (!fmt) {
    fmt = new Intl.DateTimeFormat('en-US', {
      timeZone: tz,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
    });
    formatters.set(tz, fmt);
  }
  const noon = day * 86_400_000 + 43_200_000;
  const parts: Record<string, number> = {};
  for (const p of fmt.formatToParts(noon)) if (p.type !== 'literal') parts[p.type] = Number(p.value);
  const local = Date.UTC(parts.year ?? 0, (parts.month ?? 1) - 1, parts.day ?? 1, parts.hour ?? 0, parts.minute ?? 0);
  const off = local - noon;
  offsetCache.set(key, off);
  return off;
};

/** A performance time: local wall time in `tz` on a day near `aroundMs`, as UTC instant and as local-as-UTC. */
const performance = (g: GenContext, tz: string, dayMs: number): { utc: number; localAsUtc: number } => {
  const day = Math.floor(dayMs / 86_400_000) * 86_400_000;
  const localAsUtc = day + (g.prng.chance(0.75) ? 19.5 : 14) * 3_600_000;
  return { utc: localAsUtc - tzOffsetMs(tz, day), localAsUtc };
};

const person = (role: string, name: string): JsonObject => intern(`p|${role}|${name}`, () => ({ role, name }));

export type Generator = (g: GenContext, i: number) => JsonObject;

const workTitle = (_g: GenContext, i: number): [string, string | null] => {
  const w = WORKS[i % WORKS.length] as readonly [string, string | null];
  return [w[0], w[1]];
};

export const GENERATORS: Readonly<Record<CollectionSlug, Generator>> = {
  media: (g, i) => {
    const t = g.stamps();
    const [work] = workTitle(g, i + g.prng.int(0, 7));
    const filename = `${slugify(work)}-${String(i + 1).padStart(4, '0')}.png`;
    const width = g.prng.pick([1200, 1600, 1920, 2400]);
    return {
      id: filename,
      createdAt: iso(t.createdAt),
      updatedAt: iso(t.updatedAt),
      alt: loc(`Production photo from ${work}`, g.prng.chance(0.5) ? `Photo de production : ${work}` : null),
      caption: loc(`${work}, photographed in rehearsal.`, null),
      credit: `Photo: ${g.prng.pick(PEOPLE)}`,
      filename,
      focalX: g.prng.int(20, 80),
      focalY: g.prng.int(20, 80),
      height: Math.round(width * g.prng.pick([0.5625, 0.6667, 0.75])),
      width,
      prefix: 'media',
      src: `/media/${g.tenant}/${filename}`,
      url: `/media/${g.tenant}/${filename}`,
    };
  },
  venues: (g, i) => {
    const c = common(g);
    const city = g.prng.pick(CITIES(g.prng));
    const name = `${g.prng.pick(ORG_PLACES)} ${g.prng.pick(VENUE_WORDS)}`;
    const slug = `${slugify(name)}-${i + 1}`;
    return {
      ...c,
      title: loc(name, null),
      richTitle: rich(name),
      richTitle_html: html(name),
      description: loc(`${name} in ${city.city}.`, `${name} à ${city.city}.`),
      richDescription: rich(`${name} in ${city.city}.`),
      richDescription_html: html(`${name} in ${city.city}.`),
      website: `https://${slugify(name)}.example.org`,
      country: city.country,
      addressLine1: `${g.prng.int(1, 220)} ${g.prng.pick(city.street)}`,
      addressLine2: g.prng.chance(0.3) ? `Stage door ${g.prng.pick(['A', 'B', 'C'])}` : '',
      city: city.city,
      state: city.state,
      postalCode: city.postal(),
      directions: 'Step-free access from the main entrance; nearest station a five-minute walk.',
      openingHours: intern(`oh|${city.tz}`, () => ({
        timezone: city.tz,
        sections: [
          { label: 'Box office', days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat'], opens: '10:00', closes: '20:00' },
          { label: 'Café', days: ['tue', 'wed', 'thu', 'fri', 'sat', 'sun'], opens: '09:00', closes: '23:00' },
        ],
        exceptions: [{ date: '2026-12-25', closed: true, label: 'Christmas Day' }],
        notes: 'Opening hours may vary on performance days.',
      })),
      layout: 'default',
      blocks: blocks(g, `Welcome to ${name}.`),
      attributes: attrs(g, [
        ['wheelchairSpaces', [2, 4, 8, 12]],
        ['hearingLoop', [true, false]],
      ]),
      slug,
      slugLock: true,
      publishedSlug: slug,
      publishedRelativePath: `/venues/${slug}`,
      createRedirect: false,
      image: imageRef(g),
      url: `${g.site}/venues/${slug}`,
      sharedWith: NO_SHARES,
      _status: status(g),
    };
  },
  organizations: (g, i) => {
    const c = common(g);
    const name = `${g.prng.pick(ORG_PLACES)} ${g.prng.pick(ORG_WORDS)}`;
    const slug = `${slugify(name)}-${i + 1}`;
    return {
      ...c,
      name: loc(name, null),
      richName: rich(name),
      richName_html: html(name),
      description: description(g.prng),
      richDescription: rich(`${name} makes new work for stage and screen.`),
      richDescription_html: html(`${name} makes new work for stage and screen.`),
      type: g.prng.pick(['producer', 'producer', 'presenter', 'partner']),
      layout: 'default',
      blocks: blocks(g, `${name} makes new work for stage and screen.`),
      theme: themeDefault(),
      attributes: attrs(g, [
        ['region', ['north', 'south', 'international']],
        ['founded', [1954, 1979, 1998, 2011]],
      ]),
      slug,
      slugLock: false,
      publishedSlug: slug,
      publishedRelativePath: `/organizations/${slug}`,
      createRedirect: false,
      image: imageRef(g),
      url: `${g.site}/organizations/${slug}`,
      sharedWith: NO_SHARES,
      _status: status(g),
    };
  },
  seasons: (g, i) => {
    const c = common(g);
    const year = new Date(g.epochMs).getUTCFullYear() - 1 + i;
    const title = `${year}/${String((year + 1) % 100).padStart(2, '0')} Season`;
    const slug = `season-${year}-${i + 1}`;
    const tz = g.prng.pick(['Europe/London', 'America/New_York', 'Europe/Paris']);
    return {
      ...c,
      title: loc(title, `Saison ${year}/${String((year + 1) % 100).padStart(2, '0')}`),
      richTitle: rich(title),
      richTitle_html: html(title),
      description: loc(`Our ${year} season of opera, dance and theatre.`, null),
      richDescription: rich(`Our ${year} season of opera, dance and theatre.`),
      richDescription_html: html(`Our ${year} season of opera, dance and theatre.`),
      startDate: iso(Date.UTC(year, 8, 1)),
      startDate_tz: tz,
      endDate: iso(Date.UTC(year + 1, 6, 31, 22, 59, 59)),
      endDate_tz: tz,
      layout: 'default',
      blocks: blocks(g, title),
      theme: themeDefault(),
      attributes: [],
      slug,
      slugLock: true,
      publishedSlug: slug,
      publishedRelativePath: `/seasons/${slug}`,
      createRedirect: false,
      image: imageRef(g),
      url: `${g.site}/seasons/${slug}`,
      shortId: `S${year}${i}`,
      baseSlug: `season-${year}`,
      primaryForTitle: i === 0,
      sharedWith: NO_SHARES,
      ticketingA: { seasonId: String(100 + i) },
      _status: status(g),
    };
  },
  series: (g, i) => {
    const c = common(g);
    const title = `${SERIES_NAMES[i % SERIES_NAMES.length]}${i >= SERIES_NAMES.length ? ` ${Math.floor(i / SERIES_NAMES.length) + 1}` : ''}`;
    const slug = `${slugify(title)}-${i + 1}`;
    const tz = g.prng.pick(['Europe/London', 'America/New_York', 'Europe/Paris']);
    const start = g.epochMs - g.prng.int(0, 180) * 86_400_000;
    return {
      ...c,
      title: loc(title, null),
      displayTitle: loc(title, null),
      richTitle: rich(title),
      richTitle_html: html(title),
      description: description(g.prng),
      richDescription: rich(`A series of performances: ${title}.`),
      richDescription_html: html(`A series of performances: ${title}.`),
      startDate: iso(Math.floor(start / 86_400_000) * 86_400_000),
      startDate_tz: tz,
      endDate: iso(Math.floor(start / 86_400_000) * 86_400_000 + 240 * 86_400_000),
      endDate_tz: tz,
      layout: 'default',
      blocks: blocks(g, title),
      theme: themeDefault(),
      attributes: attrs(g, [
        ['accessibility', ['audio-described', 'relaxed', 'captioned']],
        ['featured', [true, false]],
      ]),
      meta: meta(g, title, `/series/${slug}`, null),
      slug,
      publishedSlug: slug,
      publishedRelativePath: `/series/${slug}`,
      createRedirect: false,
      image: imageRef(g),
      url: `${g.site}/series/${slug}`,
      shortId: `SR${i + 1}`,
      baseSlug: slugify(title),
      primaryForTitle: false,
      sharedWith: NO_SHARES,
      ticketingA: { packageId: String(5000 + i) },
      _status: status(g),
    };
  },
  events: (g, i) => {
    const c = common(g);
    const [en, fr] = workTitle(g, i);
    const title = i >= WORKS.length ? `${en} (${Math.floor(i / WORKS.length) + 1})` : en;
    const slug = `${slugify(title)}-${i + 1}`;
    const start = g.epochMs + g.prng.int(-120, 300) * 86_400_000;
    const series = g.ref('series');
    return {
      ...c,
      title: loc(title, fr),
      slug,
      description: description(g.prng),
      startDate: iso(Math.floor(start / 86_400_000) * 86_400_000),
      startDate_tz: 'Europe/London',
      endDate: iso(Math.floor(start / 86_400_000) * 86_400_000 + g.prng.int(1, 40) * 86_400_000),
      season: g.ref('seasons'),
      series: series ? [series] : [],
      venue: g.ref('venues'),
      organization: g.ref('organizations'),
      image: imageRef(g),
      url: `${g.site}/whats-on/${slug}`,
      attributes: attrs(g, [
        ['genre', ['opera', 'ballet', 'theatre', 'concert']],
        ['ageGuidance', ['all', '8+', '12+', '16+']],
      ]),
      theme: themeDefault(),
    };
  },
  'event-instances': (g, i) => {
    const c = common(g);
    const venueTz = g.prng.pick(['Europe/London', 'America/New_York', 'Europe/Paris', 'America/Los_Angeles']);
    const p = performance(g, venueTz, g.epochMs + g.prng.int(-150, 330) * 86_400_000);
    const system = g.prng.pick(['ticketingA', 'ticketingB', 'ticketingC']);
    const series = g.ref('series');
    const perf = 40000 + i;
    const eventId = String(7000 + g.prng.int(0, 900));
    return {
      ...c,
      event: g.ref('events'),
      startDate: iso(p.utc),
      startDate_tz: venueTz,
      startDateLocalAsUTC: iso(p.localAsUtc),
      ticketingSystemId: system,
      participants: [person(g.prng.pick(ROLES), g.prng.pick(PEOPLE)), person('Soloist', g.prng.pick(PEOPLE))],
      attributes: attrs(g, [
        ['captioned', [true, false]],
        ['relaxed', [true, false]],
      ]),
      venue: g.ref('venues'),
      series: series ? [series] : [],
      booking: { bookingLinkLabel: 'Book now', bookingLinkURL: `https://tickets.example.com/${g.tenant}/${perf}` },
      ticketingA: {
        performanceId: String(perf),
        productionSeasonId: String(300 + g.prng.int(0, 40)),
        keywords: ((genre: string, audience: string) => intern(`kw|${genre}|${audience}`, () => ({ genre, audience })))(
          g.prng.pick(['opera', 'ballet', 'theatre']),
          g.prng.pick(['adult', 'family']),
        ),
        availability: g.prng.pick(['good', 'limited', 'soldOut']),
        availSaleIndicator: g.prng.pick(['A', 'L', 'S']),
        publishWebApiStartDate: iso(p.utc - 90 * 86_400_000),
        publishWebApiEndDate: iso(p.utc + 3_600_000),
        customAttributeSyncOverride: EMPTY_OBJ,
      },
      ticketingB: {
        showTimeId: `st-${perf}`,
        eventId,
        eventUrlName: `event-${eventId}`,
        customAttributeSyncOverride: EMPTY_OBJ,
      },
      ticketingC: { instanceId: `inst-${perf}`, eventId, customAttributeSyncOverride: {} },
    };
  },
  pages: (g, i) => {
    const c = common(g);
    const base = PAGE_NAMES[i % PAGE_NAMES.length] as string;
    const title = i >= PAGE_NAMES.length ? `${base} ${Math.floor(i / PAGE_NAMES.length) + 1}` : base;
    const parent = i > 3 && g.prng.chance(0.4) ? g.ref('pages') : null;
    const slug = `${slugify(title)}`;
    const rel = `/${slug}`;
    return {
      ...c,
      title: loc(title, null),
      richTitle: rich(title),
      richTitle_html: html(title),
      description: loc(`${title} at ${g.tenantName}.`, null),
      richDescription: rich(`${title} at ${g.tenantName}.`),
      richDescription_html: html(`${title} at ${g.tenantName}.`),
      theme: themeDefault(),
      meta: meta(g, title, rel, null),
      slug,
      publishedSlug: slug,
      publishedRelativePath: rel,
      createRedirect: false,
      relativePath: rel,
      displayTitle: loc(title, null),
      image: imageRef(g),
      parent,
      order: i,
      showInNavigation: i < 8,
      showInSearch: true,
      themeTemplate: 'default',
      breadcrumbs: [{ doc: c.id, url: rel, label: title }],
      publishedAt: c.updatedAt,
      url: `${g.site}${rel}`,
      sharedWith: NO_SHARES,
      _status: status(g),
    };
  },
  blogs: (g, i) => {
    const c = common(g);
    const title = `${BLOG_NAMES[i % BLOG_NAMES.length]}${i >= BLOG_NAMES.length ? ` ${Math.floor(i / BLOG_NAMES.length) + 1}` : ''}`;
    const slug = `${slugify(title)}-${i + 1}`;
    return {
      ...c,
      title: loc(title, null),
      richTitle: rich(title),
      richTitle_html: html(title),
      description: loc(`Stories from ${g.tenantName}.`, `Histoires de ${g.tenantName}.`),
      richDescription: rich(`Stories from ${g.tenantName}.`),
      richDescription_html: html(`Stories from ${g.tenantName}.`),
      layout: 'default',
      blocks: blocks(g, title),
      theme: themeDefault(),
      meta: meta(g, title, `/blog/${slug}`, null),
      slug,
      publishedSlug: slug,
      publishedRelativePath: `/blog/${slug}`,
      createRedirect: false,
      image: imageRef(g),
      url: `${g.site}/blog/${slug}`,
      sharedWith: NO_SHARES,
      _status: status(g),
    };
  },
  posts: (g, i) => {
    const c = common(g);
    const [work] = workTitle(g, i + 3);
    const title = `${g.prng.pick(POST_TOPICS)} ${work}`;
    const slug = `${slugify(title)}-${i + 1}`;
    return {
      ...c,
      title: loc(title, null),
      richTitle: rich(title),
      richTitle_html: html(title),
      description: loc(`${title}.`, null),
      richDescription: rich(`${title}.`),
      richDescription_html: html(`${title}.`),
      layout: 'default',
      blocks: blocks(g, title),
      attributes: [],
      meta: meta(g, title, `/blog/posts/${slug}`, null),
      slug,
      publishedSlug: slug,
      publishedRelativePath: `/blog/posts/${slug}`,
      createRedirect: false,
      publishDate: c.createdAt,
      blog: g.ref('blogs'),
      authors: [g.ids.make(Date.parse(c.createdAt))],
      categories: ((w: string) => intern(`cat|${w}`, () => [`cat-${slugify(w)}`]))(g.prng.pick(CATEGORY_WORDS)),
      tags: ((w: string) => intern(`tag|${w}`, () => [`tag-${slugify(w)}`]))(g.prng.pick(CATEGORY_WORDS)),
      image: imageRef(g),
      url: `${g.site}/blog/posts/${slug}`,
      showInSearch: true,
      sharedWith: NO_SHARES,
      _status: status(g),
    };
  },
  forms: (g, i) => {
    const c = common(g);
    const title = g.prng.pick(['Newsletter sign-up', 'Access requirements', 'Group bookings', 'Contact us']);
    return {
      ...c,
      title: loc(title, null),
      slug: `${slugify(title)}-${i + 1}`,
      confirmationType: 'message',
      confirmationMessage: 'Thank you, we will be in touch.',
      submitButtonLabel: 'Send',
      fields: intern('form-fields', () => [
        { blockType: 'text', name: 'name', label: 'Your name', required: true },
        { blockType: 'email', name: 'email', label: 'Email', required: true },
      ]),
      redirect: { type: 'reference', reference: null, url: null },
    };
  },
  redirects: (g, i) => {
    const c = common(g);
    return {
      ...c,
      from: `/old/what-s-on-${i + 1}`,
      matchType: 'exact',
      to: { type: g.prng.chance(0.5) ? 'reference' : 'custom', reference: g.ref('pages'), url: `/whats-on/${i + 1}` },
    };
  },
  'custom-attributes': (g) => {
    const c = common(g);
    const sel = (key: string, label: string, values: readonly string[]): JsonObject => ({
      key,
      label,
      type: 'select',
      options: values.map((v) => ({ value: v, label: v })),
    });
    const bool = (key: string, label: string): JsonObject => ({ key, label, type: 'boolean', options: [] });
    const text = (key: string, label: string): JsonObject => ({ key, label, type: 'text', options: [] });
    const num = (key: string, label: string): JsonObject => ({ key, label, type: 'number', options: [] });
    return {
      ...c,
      EventsAttributes: [sel('genre', 'Genre', ['opera', 'ballet', 'theatre', 'concert']), text('ageGuidance', 'Age')],
      EventInstancesAttributes: [bool('captioned', 'Captioned'), bool('relaxed', 'Relaxed performance')],
      PostsAttributes: [text('readingTime', 'Reading time')],
      SeasonsAttributes: [bool('subscription', 'Subscription season')],
      SeriesAttributes: [
        sel('accessibility', 'Accessibility', ['audio-described', 'relaxed', 'captioned']),
        bool('featured', 'Featured'),
        text('sponsor', 'Sponsor'),
      ],
      WorksAttributes: [text('composer', 'Composer')],
      VenuesAttributes: [num('wheelchairSpaces', 'Wheelchair spaces'), bool('hearingLoop', 'Hearing loop')],
      OrganizationsAttributes: [
        sel('region', 'Region', ['north', 'south', 'international']),
        num('founded', 'Founded'),
        bool('partner', 'Partner'),
      ],
      PeopleAttributes: [text('pronouns', 'Pronouns')],
    };
  },
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

/** Theme-settings schema per collection (the events one is served; blogs' governs the blogs bulk route). */
export const themeSettingsSchema = (collection: CollectionSlug): JsonObject => {
  const opt = (value: string | null, label: string): JsonObject => ({ value, label });
  const field = (key: string, type: string, label: string, options: JsonObject[]): JsonObject => ({
    key,
    type,
    label,
    hasMany: false,
    relationTo: null,
    options,
    fields: [],
    customObjectType: null,
  });
  return {
    collection,
    configurationAvailable: true,
    template: 'default',
    reason: null,
    fields: [
      field('heroStyle', 'select', 'Hero style', [
        opt(null, 'Theme default'),
        opt('full-bleed', 'Full bleed'),
        opt('split', 'Split'),
        opt('minimal', 'Minimal'),
      ]),
      field('accentColor', 'select', 'Accent colour', [
        opt(null, 'Theme default'),
        opt('crimson', 'Crimson'),
        opt('gold', 'Gold'),
        opt('teal', 'Teal'),
      ]),
      field('showCountdown', 'checkbox', 'Show countdown', []),
      field('tagline', 'text', 'Tagline', []),
    ],
  };
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

const TENANT_PLACES = ['harbour', 'northern', 'riverside', 'grand', 'royal', 'civic', 'lakeside', 'old-town'];
const TENANT_KINDS = ['opera', 'ballet', 'playhouse', 'philharmonic', 'dance-company', 'arts-centre', 'festival'];

/** Distinct tenant slugs and display names. */
export const tenantNames = (prng: Prng, n: number): { slug: string; name: string }[] => {
  const all: string[] = [];
  for (const p of TENANT_PLACES) for (const k of TENANT_KINDS) all.push(`${p}-${k}`);
  for (let i = all.length - 1; i > 0; i--) {
    const j = prng.int(0, i);
    [all[i], all[j]] = [all[j] as string, all[i] as string];
  }
  const out: { slug: string; name: string }[] = [];
  for (let i = 0; i < n; i++) {
    const base = all[i % all.length] as string;
    const slug = i < all.length ? base : `${base}-${Math.floor(i / all.length) + 1}`;
    const name = slug
      .split('-')
      .map((w) => w[0]?.toUpperCase() + w.slice(1))
      .join(' ');
    out.push({ slug, name });
  }
  return out;
};

const KEY_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-';
export const makeKey = (prng: Prng): string => {
  let s = 'sk_';
  for (let i = 0; i < 32; i++) s += KEY_ALPHABET[prng.int(0, KEY_ALPHABET.length - 1)];
  return s;
};
