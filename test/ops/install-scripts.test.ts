import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

// `npm ci` on npm 11 lists every dependency whose install script package.json does not declare (issue 37, item 9):
// a newcomer then wonders whether the build worked. Every one is declared: the native builds allowed, telemetry not.
const json = (f: string) => JSON.parse(readFileSync(new URL(`../../${f}`, import.meta.url), 'utf8'));

describe('install scripts', () => {
  const pkg = json('package.json') as { allowScripts?: Record<string, boolean>; scarfSettings?: { enabled?: boolean } };
  const lock = json('package-lock.json') as { packages: Record<string, { hasInstallScript?: boolean }> };
  const withScripts = Object.entries(lock.packages)
    .filter(([path, p]) => path !== '' && p.hasInstallScript)
    .map(([path]) => path.replace(/^.*node_modules\//, ''));

  it('declares every dependency that has one, in the form npm 11 reads', () => {
    expect(withScripts.length).toBeGreaterThan(0);
    for (const name of withScripts) expect(pkg.allowScripts?.[name], name).toBeTypeOf('boolean');
  });

  it('allows the native builds the mirror and the queue need, and denies telemetry', () => {
    expect(pkg.allowScripts).toMatchObject({ 'better-sqlite3': true, 'msgpackr-extract': true, '@scarf/scarf': false });
    expect(pkg.scarfSettings?.enabled).toBe(false);
  });
});
