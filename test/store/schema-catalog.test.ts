import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openMirrorSchema } from '../../src/store/describe-mirror.js';
import { openStore } from '../../src/store/open-mirror.js';
import { SCHEMA_CATALOG } from '../../src/store/schema-catalog.js';
import { renderSchemaDoc } from '../../src/store/schema-doc.js';
import { tempDir } from '../helpers/sync-harness.js';

const migrated = async (): Promise<string> => {
  const path = join(tempDir(), 'm.db');
  await (await openStore(path)).close();
  return path;
};

describe('the schema catalog', () => {
  it('describes every table and view a migrated mirror has, column by column, with the same indexes', async () => {
    const schema = openMirrorSchema(await migrated());
    try {
      const real = await schema.describe();
      expect(real.map((r) => r.name).sort()).toEqual(SCHEMA_CATALOG.map((r) => r.name).sort());
      for (const r of real) {
        const note = SCHEMA_CATALOG.find((n) => n.name === r.name)!;
        expect({ name: r.name, type: r.type }).toEqual({ name: note.name, type: note.kind });
        const cols = (c: { name: string; type: string; notNull: boolean }) =>
          `${c.name} ${c.type}${r.type === 'table' && c.notNull ? ' NOT NULL' : ''}`;
        // SQLite gives a view's expression columns no type: the catalog's type is then the one documented.
        expect(r.columns.map(cols)).toEqual(
          note.columns.map((c, i) => cols({ ...c, type: r.columns[i]?.type === '' ? '' : c.type })),
        );
        expect(r.columns.every((c) => c.meaning.length > 0)).toBe(true);
        expect([...r.indexes].sort()).toEqual([...note.indexes].sort());
      }
    } finally {
      await schema.close();
    }
  });

  it('is what docs/schema.md shows (npm run schemas rewrites it)', () => {
    const doc = readFileSync(new URL('../../docs/schema.md', import.meta.url), 'utf8');
    expect(doc).toContain(renderSchemaDoc());
  });
});
