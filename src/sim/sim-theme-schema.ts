import type { CollectionSlug } from '../vocabulary/collections.js';
import type { JsonObject } from '../vocabulary/ids.js';

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
