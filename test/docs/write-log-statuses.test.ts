import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { WRITE_STATUSES } from '../../src/writes/write-log.js';

/** The backticked words of the `status` row of the `write_log` table in a page. */
const listedStatuses = (page: string): string[] => {
  const md = readFileSync(new URL(`../../${page}`, import.meta.url), 'utf8');
  const table = md.slice(md.search(/^(#+ .*write_log|`write_log`)/m));
  const row = /^\| *`status` *\|(.*)$/m.exec(table)?.[1] ?? '';
  return [...row.matchAll(/`([a-z_-]+)`/g)].map((m) => m[1] as string);
};

describe('the write_log statuses in the docs', () => {
  it.each(['docs/schema.md', 'docs/writes.md'])('%s lists exactly the statuses the code writes', (page) => {
    expect([...new Set(listedStatuses(page))].sort()).toEqual([...WRITE_STATUSES].sort());
  });
});
