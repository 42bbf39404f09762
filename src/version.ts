import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * understudy's version, from its package.json: the nearest one above this file whose name is `understudy` (the
 * same file whether this runs from src/ under vitest or from dist/ once built).
 */
function readVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'understudy' && pkg.version) return pkg.version;
    } catch {
      // not here: look one folder up
    }
    dir = dirname(dir);
  }
  return '0.0.0-unknown';
}

export const VERSION = readVersion();
