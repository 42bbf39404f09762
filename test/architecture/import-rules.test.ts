import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The import rules of docs/architecture.md, checked on every run. Each source file's imports are read from its text
 * (static `from '…'` and dynamic `import('…')`); relative ones are resolved to paths from the repository root.
 */
const root = fileURLToPath(new URL('../../', import.meta.url));

const sourceFiles = (dir: string): string[] =>
  readdirSync(join(root, dir)).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(join(root, path)).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });

interface Import {
  readonly file: string;
  /** A package name (`bullmq`, `node:fs`) or a repository path without extension (`src/store/store`). */
  readonly target: string;
}

const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"]([^'"]+)['"]/gm;
const importsOf = (file: string): Import[] =>
  [...readFileSync(join(root, file), 'utf8').matchAll(IMPORT)].map(([, spec = '']) => ({
    file,
    target: spec.startsWith('.') ? normalize(join(dirname(file), spec)).replace(/\.(js|ts)$/, '') : spec,
  }));

const all = [...sourceFiles('src'), ...sourceFiles('jobs')].flatMap(importsOf);
const from = (...dirs: string[]) => all.filter((i) => dirs.some((d) => i.file.startsWith(`${d}/`)));
const show = (imports: Import[]) => imports.map((i) => `${i.file} -> ${i.target}`);
const pkg = (name: string) => (i: Import) => i.target === name || i.target.startsWith(`${name}/`);
const under = (dir: string) => (i: Import) => i.target.startsWith(`${dir}/`) || i.target === dir;

describe('import rules (docs/architecture.md)', () => {
  it('sync and writes are plain logic: no bullmq, ioredis, undici, better-sqlite3 or kysely', () => {
    const infra = ['bullmq', 'ioredis', 'undici', 'better-sqlite3', 'kysely'].map(pkg);
    expect(show(from('src/sync', 'src/writes').filter((i) => infra.some((p) => p(i))))).toEqual([]);
  });

  it('sync and writes import nothing from jobs/, app/, cli/ or queue/', () => {
    const outer = ['jobs', 'src/app', 'src/cli', 'src/queue'].map(under);
    expect(show(from('src/sync', 'src/writes').filter((i) => outer.some((p) => p(i))))).toEqual([]);
  });

  it('the store and the simulator share the vocabulary, not the partners client', () => {
    expect(show(from('src/store', 'src/sim').filter(under('src/partners')))).toEqual([]);
  });

  it('the partners client and the store do not import each other', () => {
    expect(show(from('src/partners').filter(under('src/store')))).toEqual([]);
  });

  it('only the CLI imports the CLI', () => {
    expect(show(all.filter((i) => !i.file.startsWith('src/cli/') && under('src/cli')(i)))).toEqual([]);
  });

  it('the vocabulary imports nothing of the project but itself', () => {
    const own = from('src/vocabulary').filter((i) => i.target.startsWith('src/') || i.target.startsWith('jobs/'));
    expect(show(own.filter((i) => !under('src/vocabulary')(i)))).toEqual([]);
  });

  it('raw SQL lives in the store (and the simulator, and the sql command that runs what it is given)', () => {
    const raw = /\.prepare\(|sql`|db\.exec\(/;
    const allowed = (f: string) => /^src\/(store|sim)\//.test(f) || f === 'src/cli/sql-command.ts';
    const offenders = [...sourceFiles('src'), ...sourceFiles('jobs')].filter(
      (f) => !allowed(f) && raw.test(readFileSync(join(root, f), 'utf8')),
    );
    expect(offenders).toEqual([]);
  });

  it('no source file is a warehouse (500 lines at most), and each processor in jobs/ is thin (120 at most)', () => {
    const lines = (f: string) => readFileSync(join(root, f), 'utf8').split('\n').length - 1;
    const over = [
      ...[...sourceFiles('src'), ...sourceFiles('jobs')].filter((f) => lines(f) > 500),
      ...sourceFiles('jobs').filter((f) => lines(f) > 120),
    ].map((f) => `${f} (${lines(f)} lines)`);
    expect(over).toEqual([]);
  });

  it('every relative import resolves to a file', () => {
    const missing = all
      .filter((i) => i.target.startsWith('src/') || i.target.startsWith('jobs/') || i.target.startsWith('migrations/'))
      .filter((i) => {
        try {
          return !statSync(join(root, `${i.target}.ts`)).isFile();
        } catch {
          return true;
        }
      });
    expect(show(missing)).toEqual([]);
  });
});
