import type { CollectionSlug } from '../vocabulary/collections.js';
import {
  attrs,
  blocks,
  common,
  description,
  EMPTY_OBJ,
  type Generator,
  html,
  imageRef,
  intern,
  iso,
  loc,
  meta,
  NO_SHARES,
  person,
  rich,
  slugify,
  status,
  themeDefault,
  workTitle,
} from './sim-doc-parts.js';
import { performance } from './sim-local-time.js';
import { PEOPLE, ROLES, SERIES_NAMES, WORKS } from './sim-word-lists.js';

/** Record generators for seasons, series, events and their instances. */
export const programmeGenerators = {
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
} satisfies Partial<Record<CollectionSlug, Generator>>;
