import { existsSync } from 'node:fs';
import type { CollectionSlug } from '../vocabulary/collections.js';
import { tenantSlug, type UpstreamDoc } from '../vocabulary/ids.js';
import { openSqliteStore } from './sqlite-store.js';
import type { Store } from './store.js';

/** Reads mirrored theme-settings schemas for a command that holds no app: the mirror opens on the first read. */
export interface ThemeSchemaReader {
  /** The stored schema, or null (also when the mirror file does not exist: it is never created here). */
  read(tenant: string, collection: CollectionSlug): Promise<UpstreamDoc | null>;
  /** Closes the mirror if it was opened. Idempotent. */
  close(): Promise<void>;
}

export function themeSchemaReader(path: string): ThemeSchemaReader {
  let store: Promise<Store> | null = null;
  return {
    async read(tenant, collection) {
      if (!store) {
        if (path !== ':memory:' && !existsSync(path)) return null;
        store = openSqliteStore(path);
      }
      return (await store).getThemeSchema(tenantSlug(tenant), collection);
    },
    async close() {
      if (store) await (await store).close();
    },
  };
}
