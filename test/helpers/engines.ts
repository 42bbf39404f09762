import { join } from 'node:path';
import { testDatabase } from './postgres.js';
import { tempDir } from './sync-harness.js';

/** Each engine a mirror runs on, with a fresh mirror location of it for the current test: `describe.each(ENGINES)`. */
export const ENGINES = [
  ['SQLite', async (): Promise<string> => join(tempDir(), 'mirror.db')],
  ['PostgreSQL', (): Promise<string> => testDatabase()],
] as const;
