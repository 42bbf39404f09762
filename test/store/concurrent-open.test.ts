import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/sync-harness.js';

const STORE = fileURLToPath(new URL('../../dist/src/store/open-mirror.js', import.meta.url));

/** Opens (and so migrates) the store in a separate process; resolves to what it printed. */
const openIn = (db: string): Promise<string> =>
  new Promise((resolve, reject) => {
    const code = `import(${JSON.stringify(STORE)}).then(async ({ openStore }) => {
      try { const s = await openStore(${JSON.stringify(db)}); await s.close(); console.log('ok'); }
      catch (e) { console.log('ERR ' + e.message); } })`;
    const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.once('error', reject);
    child.once('close', () => resolve(out.trim()));
  });

describe('opening one fresh mirror from several processes at once', () => {
  it('migrates it once and every process opens it (workers starting together)', async () => {
    const dir = tempDir();
    for (let round = 0; round < 4; round++) {
      const db = join(dir, `m${round}.db`);
      const outcomes = await Promise.all([openIn(db), openIn(db), openIn(db)]);
      expect(outcomes).toEqual(['ok', 'ok', 'ok']);
    }
  });
});
