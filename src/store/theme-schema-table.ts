import type { Kysely } from 'kysely';
import type { CollectionSlug } from '../vocabulary/collections.js';
import type { TenantSlug, UpstreamDoc } from '../vocabulary/ids.js';
import type { Database } from './db-schema.js';
import type { PreparedStatements } from './prepared-statements.js';

/** The `theme_settings_schemas` table: one schema document per tenant and collection. */
export class ThemeSchemas {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly stmts: PreparedStatements,
  ) {}

  save(tenant: TenantSlug, collection: CollectionSlug, schema: UpstreamDoc, now: string): void {
    const doc = JSON.stringify(schema);
    this.stmts.run(
      this.db
        .insertInto('theme_settings_schemas')
        .values({ tenant, collection, doc, fetched_at: now })
        .onConflict((oc) => oc.columns(['tenant', 'collection']).doUpdateSet({ doc, fetched_at: now }))
        .compile(),
    );
  }

  get(tenant: TenantSlug, collection: CollectionSlug): UpstreamDoc | null {
    const [r] = this.stmts.all(
      this.db
        .selectFrom('theme_settings_schemas')
        .select('doc')
        .where('tenant', '=', tenant)
        .where('collection', '=', collection)
        .compile(),
    );
    return r ? (JSON.parse(r.doc) as UpstreamDoc) : null;
  }
}
