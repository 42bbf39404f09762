import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { appDir, compileApp } from '../helpers/compile-app.js';

/**
 * The write bodies are typed from the spec's resource shapes: an app's tsc refuses a misspelt field at any depth.
 * The fixtures in test/fixtures/typed-bodies/ are compiled as an app would compile them, importing the built
 * package (run `npm run build` first).
 */
const fixture = (name: string): string => {
  const app = appDir();
  const file = join(app, name);
  copyFileSync(fileURLToPath(new URL(`../fixtures/typed-bodies/${name}`, import.meta.url)), file);
  return file;
};

describe('typed write bodies', () => {
  it('compile when every field is spelt as the spec has it', () => {
    expect(compileApp([fixture('good.ts')])).toEqual([]);
  });

  it('do not compile with a misspelt nested field, and tsc names it and the field meant', () => {
    const errors = compileApp([fixture('misspelt-nested.ts')]);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/misspelt-nested\.ts\(6\): .*'bookingLinkLable' does not exist .*'bookingLinkLabel'/);
  });

  it('do not compile with a misspelt top-level field, a misspelt field of meta, or a field spec rule 1 forbids', () => {
    const errors = compileApp([fixture('misspelt-top.ts')]);
    expect(errors).toEqual([
      expect.stringMatching(/\(7\): .*'titel' does not exist/),
      expect.stringMatching(/\(8\): .*'canonicl' does not exist/),
      expect.stringMatching(/\(9\): .*'blocks' does not exist/),
    ]);
  });
});
