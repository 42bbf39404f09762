import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { changeLogContract } from './change-log-contract.js';

changeLogContract('SQLite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'understudy-'));
  const path = join(dir, 'mirror.db');
  return {
    database: path,
    query: async (q, params = []) => {
      const db = new BetterSqlite3(path, { readonly: true });
      try {
        return db.prepare(q).all(...params) as Record<string, unknown>[];
      } finally {
        db.close();
      }
    },
    drop: async () => rmSync(dir, { recursive: true, force: true }),
  };
});
