import type { CollectionSlug } from '../vocabulary/collections.js';
import type { JsonObject } from '../vocabulary/ids.js';
import { common, type Generator, intern, loc, slugify } from './sim-doc-parts.js';

/** Record generators for forms, redirects and the custom-attribute configuration. */
export const siteGenerators = {
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
} satisfies Partial<Record<CollectionSlug, Generator>>;
