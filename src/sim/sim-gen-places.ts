import type { CollectionSlug } from '../vocabulary/collections.js';
import {
  attrs,
  blocks,
  common,
  description,
  type Generator,
  html,
  imageRef,
  intern,
  iso,
  loc,
  NO_SHARES,
  rich,
  slugify,
  status,
  themeDefault,
  workTitle,
} from './sim-doc-parts.js';
import { CITIES, ORG_PLACES, ORG_WORDS, PEOPLE, VENUE_WORDS } from './sim-word-lists.js';

/** Record generators for media, venues and organizations. */
export const placeGenerators = {
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
    const city = g.prng.pick(CITIES);
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
      postalCode: city.postal(g.prng),
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
} satisfies Partial<Record<CollectionSlug, Generator>>;
