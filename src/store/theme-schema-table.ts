import type { Kysely } from 'kysely';
import type { CollectionSlug } from '../vocabulary/collections.js';
import type { TenantSlug, UpstreamDoc } from '../vocabulary/ids.js';
import type { Database } from './db-schema.js';

/** The `theme_settings_schemas` table: one schema document per tenant and collection. */
export const themeSchemas = {
  async save(
    db: Kysely<Database>,
    tenant: TenantSlug,
    collection: CollectionSlug,
    schema: UpstreamDoc,
    now: string,
  ): Promise<void> {
    const doc = JSON.stringify(schema);
    await db
      .insertInto('theme_settings_schemas')
      .values({ tenant, collection, doc, fetched_at: now })
      .onConflict((oc) => oc.columns(['tenant', 'collection']).doUpdateSet({ doc, fetched_at: now }))
      .execute();
  },

  async get(db: Kysely<Database>, tenant: TenantSlug, collection: CollectionSlug): Promise<UpstreamDoc | null> {
    const r = await db
      .selectFrom('theme_settings_schemas')
      .select('doc')
      .where('tenant', '=', tenant)
      .where('collection', '=', collection)
      .executeTakeFirst();
    return r ? (JSON.parse(r.doc) as UpstreamDoc) : null;
  },
};
