import { type CollectionSlug, THEME_SCHEMA_COLLECTIONS } from '../vocabulary/collections.js';
import type { JsonObject } from '../vocabulary/ids.js';
import { checkCustomAttributes } from './custom-attributes-check.js';
import { checkThemeSettings } from './theme-settings-check.js';
import { type BulkBody, bulkKindOf } from './write-job.js';

/** Where validation finds mirrored theme-settings schemas; null when none is mirrored. */
export type ThemeSchemaSource = (tenant: string, collection: CollectionSlug) => Promise<JsonObject | null>;

/** Where validation finds a tenant's mirrored Custom Attribute record (its attribute definitions); null when none is. */
export type CustomAttributesSource = (tenant: string) => Promise<JsonObject | null>;

/** What the mirror holds that bulk writes are checked against at enqueue. */
export interface MirrorDefinitions {
  /** Theme-settings schemas; absent: theme-settings writes are refused (they need the schema). */
  readonly themeSchema?: ThemeSchemaSource | null;
  /** Custom-attribute definitions; absent, or none mirrored yet: the write is queued unchecked, and `onUnchecked` told. */
  readonly customAttributes?: CustomAttributesSource | null;
  /** Told (one line) when a write is queued without a check the mirror cannot make yet. */
  readonly onUnchecked?: (message: string) => void;
}

/** The mirrored schema that governs a collection's theme settings: its own, else one the upstream serves. */
async function themeSchemaFor(
  source: ThemeSchemaSource,
  tenant: string,
  collection: CollectionSlug,
): Promise<JsonObject | null> {
  const own = await source(tenant, collection);
  if (own) return own;
  for (const c of THEME_SCHEMA_COLLECTIONS) {
    const served = await source(tenant, c);
    if (served) return served;
  }
  return null;
}

/** A bulk write's theme-settings keys and values against the mirrored schema (which it needs). */
async function themeSettingsProblem(
  mirror: MirrorDefinitions | null,
  tenant: string,
  collection: CollectionSlug,
  bulk: BulkBody,
): Promise<string | null> {
  const source = mirror?.themeSchema;
  if (!source) return 'theme-settings writes are checked against the mirrored schema: give the database';
  const schema = await themeSchemaFor(source, tenant, collection);
  if (!schema) return `no theme-settings schema is mirrored for tenant ${tenant}: run \`understudy sync\` first`;
  return checkThemeSettings(schema, collection, bulk.set, bulk.unset);
}

/**
 * What is wrong with a bulk write's keys and values against what the mirror defines (theme settings, custom
 * attributes), in one line; null when nothing is. Custom attributes not mirrored yet: unchecked, `onUnchecked` told.
 */
export async function bulkKeysProblem(
  mirror: MirrorDefinitions | null,
  tenant: string,
  collection: CollectionSlug,
  bulk: BulkBody,
): Promise<string | null> {
  if (bulkKindOf(collection) === 'theme-settings') return themeSettingsProblem(mirror, tenant, collection, bulk);
  if (!mirror?.customAttributes) {
    // This client was given nothing to read definitions from: say so, not that none are mirrored.
    mirror?.onUnchecked?.(
      `this client has no mirror to check against: the keys and values of this bulk write to ${collection} are not ` +
        'checked before it is queued (pass `store: await openMirrorReader(config)` or `customAttributes` to ' +
        'createWriteQueue)',
    );
    return null;
  }
  const record = await mirror.customAttributes(tenant);
  if (!record) {
    // Nothing to check against yet (a first write before the first sync): the upstream has the last word.
    mirror.onUnchecked?.(
      `no custom-attribute definitions are mirrored for tenant ${tenant}: the keys and values of this bulk write ` +
        `to ${collection} are not checked before it is queued (run \`understudy sync --collection custom-attributes\`)`,
    );
    return null;
  }
  return checkCustomAttributes(record, collection, tenant, bulk.set, bulk.unset);
}
