import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TYPED_COLUMNS } from '../../src/store/columns.js';
import { dialectFor } from '../../src/store/dialect.js';
import { openStore } from '../../src/store/open-mirror.js';
import type { Store } from '../../src/sync/store-port.js';
import { COLLECTIONS, tableFor } from '../../src/vocabulary/collections.js';
import { normaliseRow, storeContract } from './store-contract.js';

/** Reads with a second connection, as a user of `understudy sql` would (integers exact, as bigint when large). */
const reader =
  (path: string) =>
  (q: string, params: readonly unknown[] = []) => {
    const db = new BetterSqlite3(path, { readonly: true });
    try {
      return db
        .prepare(q)
        .safeIntegers(true)
        .all(...params)
        .map((r) => normaliseRow(r as Record<string, unknown>));
    } finally {
      db.close();
    }
  };

storeContract('SQLite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'understudy-'));
  const path = join(dir, 'nested', 'mirror.db');
  // One dialect for the mirror, as one process holds: the stores it opens take turns to write (one thread).
  const dialect = dialectFor(path);
  return {
    open: (clock) => openStore(dialect, clock),
    query: async (q, params) => reader(path)(q, params),
    destroy: async () => rmSync(dir, { recursive: true, force: true }),
  };
});

describe('the SQLite mirror file', () => {
  let dir: string;
  let path: string;
  let store: Store;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'understudy-'));
    path = join(dir, 'nested', 'mirror.db');
    store = await openStore(path);
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('has every collection table with its typed columns, and the bookkeeping tables', () => {
    const query = reader(path);
    const tables = query("SELECT name FROM sqlite_master WHERE type='table'").map((r) => r.name);
    for (const c of COLLECTIONS) {
      expect(tables).toContain(tableFor(c));
      const cols = query(`PRAGMA table_info(${tableFor(c)})`).map((r) => r.name);
      for (const base of ['tenant', 'id', 'updated_at', 'created_at', 'doc', 'deleted_at', 'seen_run', 'mirrored_at'])
        expect(cols).toContain(base);
      for (const t of TYPED_COLUMNS[c]) expect(cols, `${c}.${t.column}`).toContain(t.column);
    }
    for (const t of ['doc_variants', 'sync_state', 'sync_runs', 'theme_settings_schemas', 'sync_leases'])
      expect(tables).toContain(t);
    const idx = query("SELECT name FROM sqlite_master WHERE type='index'").map((r) => r.name);
    expect(idx).toContain('event_instances_tenant_event_id');
    expect(idx).toContain('events_sync');
  });

  it('is in WAL mode, and migrates again on reopen without error', async () => {
    expect(reader(path)('PRAGMA journal_mode')[0]?.journal_mode).toBe('wal');
    await store.close();
    store = await openStore(path);
  });
});
