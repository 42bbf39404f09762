import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The import rules of docs/architecture.md, checked on every run: its table of parts ("may use") and its rules.
 * Each source file's imports are read from its text (static `import`/`export … from '…'`, side-effect `import '…'`
 * and dynamic `import('…')`); relative ones are resolved to paths from the repository root.
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
  /** `import type …`, `export type … from`, or every imported name marked `type`: nothing is there at run time. */
  readonly typeOnly: boolean;
}

// The clause between `import`/`export` and `from` holds names, braces, `*`, `as` and `type`: never `=`, `(`, `;`.
const STATIC = /^\s*(?:import|export)\s+(type\s+)?([^'";=()]*?)\s*from\s*['"]([^'"]+)['"]/gm;
const BARE = /^\s*import\s+['"]([^'"]+)['"]/gm;
const DYNAMIC = /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;
const allTyped = (clause: string): boolean => {
  const braces = /^\{([\s\S]*)\}$/.exec(clause.trim());
  const names =
    braces?.[1]
      ?.split(',')
      .map((n) => n.trim())
      .filter(Boolean) ?? [];
  return names.length > 0 && names.every((n) => n.startsWith('type '));
};
const importsOf = (file: string): Import[] => {
  const text = readFileSync(join(root, file), 'utf8');
  const found: [string, boolean][] = [
    ...[...text.matchAll(STATIC)].map(([, type, clause = '', spec = '']): [string, boolean] => [
      spec,
      Boolean(type) || allTyped(clause),
    ]),
    ...[...text.matchAll(BARE), ...text.matchAll(DYNAMIC)].map(([, spec = '']): [string, boolean] => [spec, false]),
  ];
  return found.map(([spec, typeOnly]) => ({
    file,
    target: spec.startsWith('.') ? normalize(join(dirname(file), spec)).replace(/\.(js|ts)$/, '') : spec,
    typeOnly,
  }));
};

const files = [...sourceFiles('src'), ...sourceFiles('jobs'), ...sourceFiles('migrations')];
const all = files.flatMap(importsOf);
const from = (...dirs: string[]) => all.filter((i) => dirs.some((d) => i.file.startsWith(`${d}/`)));
const show = (imports: Import[]) => imports.map((i) => `${i.file} -> ${i.target}`);
const pkg = (name: string) => (i: Import) => i.target === name || i.target.startsWith(`${name}/`);
const under = (dir: string) => (i: Import) => i.target.startsWith(`${dir}/`) || i.target === dir;
const isProject = (target: string) => /^(src|jobs|migrations)\//.test(target);

/** One row of docs/architecture.md's table of parts. */
interface Part {
  readonly name: string;
  /** Folders (ending in `/`) and files, from the repository root. */
  readonly paths: readonly string[];
  /** By part name: null allows any import of it; else `types` (type imports of any file) and/or file base names. */
  readonly mayUse: ReadonlyMap<string, { readonly types: boolean; readonly files: readonly string[] } | null>;
}

/** Splits on commas outside parentheses. */
const items = (cell: string): string[] => {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of cell) {
    if (ch === ',' && depth === 0) {
      out.push(cur.trim());
      cur = '';
      continue;
    }
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    cur += ch;
  }
  if (cur.trim()) out.push(cur.trim());
  return out;
};

/** The table under "## The parts": its `part`, `folder` and `may use` columns. */
function partsTable(): Part[] {
  const doc = readFileSync(join(root, 'docs/architecture.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## The parts'), doc.indexOf('\n## ', doc.indexOf('## The parts') + 1));
  const rows = section
    .split('\n')
    .filter((l) => l.startsWith('|'))
    .map((l) =>
      l
        .slice(1, -1)
        .split('|')
        .map((c) => c.trim()),
    );
  const [head = [], , ...body] = rows;
  const col = (name: string) => head.indexOf(name);
  const [partCol, folderCol, mayCol] = [col('part'), col('folder'), col('may use')];
  if (partCol < 0 || folderCol < 0 || mayCol < 0) throw new Error('docs/architecture.md: no table of parts');
  const names = body.map((r) => r[partCol] ?? '');
  return body.map((r) => {
    const cell = r[mayCol] ?? '';
    const everything = /^everything( but (.+))?$/.exec(cell);
    const listed: [string, { types: boolean; files: string[] } | null][] =
      cell === 'nothing of the project'
        ? []
        : everything
          ? names.filter((n) => !items(everything[2] ?? '').includes(n)).map((n): [string, null] => [n, null])
          : items(cell).map((item) => {
              const m = /^(.+?)\s*\((.+)\)$/.exec(item);
              if (!m) return [item, null];
              const tokens = items(m[2] ?? '');
              return [m[1] ?? '', { types: tokens.includes('types'), files: tokens.filter((t) => t !== 'types') }];
            });
    return {
      name: r[partCol] ?? '',
      paths: [...(r[folderCol] ?? '').matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? ''),
      mayUse: new Map(listed),
    };
  });
}

const parts = partsTable();
/** The part a repository path (with or without `.ts`) belongs to: the row with the longest matching path. */
const partOf = (path: string): Part | undefined => {
  const file = path.endsWith('.ts') ? path : `${path}.ts`;
  let best: { part: Part; length: number } | undefined;
  for (const part of parts)
    for (const p of part.paths)
      if ((p.endsWith('/') ? file.startsWith(p) : file === p) && p.length > (best?.length ?? -1))
        best = { part, length: p.length };
  return best?.part;
};

describe('the table of parts (docs/architecture.md)', () => {
  it('is read: every part has a folder, and every part it names is a part', () => {
    expect(parts.length).toBeGreaterThan(10);
    const names = new Set(parts.map((p) => p.name));
    for (const p of parts) {
      expect(p.paths, p.name).not.toEqual([]);
      expect(
        [...p.mayUse.keys()].filter((n) => !names.has(n)),
        p.name,
      ).toEqual([]);
    }
  });

  it('places every source file in exactly one part', () => {
    expect(files.filter((f) => !partOf(f))).toEqual([]);
  });

  it('each part imports only what its row\'s "may use" allows', () => {
    const refused = all.filter((i) => {
      if (!isProject(i.target)) return false;
      const mine = partOf(i.file);
      const theirs = partOf(i.target);
      if (!mine || !theirs || mine === theirs) return false;
      if (!mine.mayUse.has(theirs.name)) return true;
      const rule = mine.mayUse.get(theirs.name);
      if (!rule) return false;
      const base = i.target.slice(i.target.lastIndexOf('/') + 1);
      return !((rule.types && i.typeOnly) || rule.files.includes(base));
    });
    expect(
      refused.map((i) => `${partOf(i.file)?.name}: ${i.file} -> ${i.target}${i.typeOnly ? ' (types)' : ''}`),
    ).toEqual([]);
  });

  it("no two parts import each other's values, and the queue imports nothing of the app", () => {
    const valueEdges = new Set(
      all
        .filter((i) => isProject(i.target) && !i.typeOnly)
        .map((i) => [partOf(i.file)?.name, partOf(i.target)?.name])
        .filter(([a, b]) => a && b && a !== b)
        .map(([a, b]) => `${a} -> ${b}`),
    );
    const mutual = [...valueEdges].filter((e) => {
      const [a, b] = e.split(' -> ');
      return valueEdges.has(`${b} -> ${a}`);
    });
    expect(mutual).toEqual([]);
    expect(show(from('src/queue').filter(under('src/app')))).toEqual([]);
  });
});

describe('import rules (docs/architecture.md)', () => {
  it('sync and writes are plain logic: no bullmq, ioredis, undici, better-sqlite3 or kysely', () => {
    const infra = ['bullmq', 'ioredis', 'undici', 'better-sqlite3', 'kysely'].map(pkg);
    expect(show(from('src/sync', 'src/writes').filter((i) => infra.some((p) => p(i))))).toEqual([]);
  });

  it('the database drivers (pg, pg-cursor, better-sqlite3) are imported only in their engine folders', () => {
    const drivers = ['pg', 'pg-cursor', 'better-sqlite3'].map(pkg);
    const home = (i: Import) => /^src\/store\/(sqlite|postgres)\//.test(i.file);
    expect(show(all.filter((i) => drivers.some((p) => p(i)) && !home(i)))).toEqual([]);
  });

  it("no source file but src/store/dialect.ts tests a database URL's scheme (dialectFor is the one chooser)", () => {
    // A scheme in a pattern or a prefix test: /^postgres(ql)?:\/\//, /^[a-z][a-z0-9+.-]*:\/\//, startsWith('postgres.
    const schemeTest =
      /\/\^\(?postgres|\/\^\[a-z\]\[a-z0-9[^\]]*\]\*:|startsWith\(\s*['"`]postgres|isPostgres|isSqlite/i;
    const offenders = [...sourceFiles('src'), ...sourceFiles('jobs')].filter(
      (f) =>
        f !== 'src/store/dialect.ts' &&
        !/^src\/store\/(sqlite|postgres)\//.test(f) &&
        schemeTest.test(readFileSync(join(root, f), 'utf8')),
    );
    expect(offenders).toEqual([]);
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
    const over = [...files.filter((f) => lines(f) > 500), ...sourceFiles('jobs').filter((f) => lines(f) > 120)].map(
      (f) => `${f} (${lines(f)} lines)`,
    );
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

describe('errors (docs/errors.md)', () => {
  it("callers branch on an error's code: no `instanceof` one of the project's errors outside src/errors.ts", () => {
    const texts = new Map(
      [...sourceFiles('src'), ...sourceFiles('jobs')].map((f) => [f, readFileSync(join(root, f), 'utf8')] as const),
    );
    // The project's error classes: each `class XError extends Y` whose Y is `Error` or one of them.
    const parents = new Map<string, string>();
    for (const text of texts.values())
      for (const [, name = '', parent = ''] of text.matchAll(/\bclass\s+(\w+)\s+extends\s+(\w+)/g))
        parents.set(name, parent);
    const isError = (name: string, depth = 0): boolean => {
      const parent = parents.get(name);
      return parent === 'Error' || (parent !== undefined && depth < 10 && isError(parent, depth + 1));
    };
    const ours = new Set([...parents.keys()].filter((n) => n.endsWith('Error') && isError(n)));
    expect([...ours]).toEqual(expect.arrayContaining(['UnderstudyError', 'UpstreamError', 'GateParkedError']));
    // The one class test is `isUnderstudyError` (src/errors.ts); foreign classes (TypeError, CommanderError,
    // BullMQ's UnrecoverableError) are not ours to give a code.
    const offenders = [...texts]
      .filter(([file]) => file !== 'src/errors.ts')
      .flatMap(([file, text]) =>
        [...text.matchAll(/\binstanceof\s+(\w+)/g)]
          .filter(([, name = '']) => ours.has(name))
          .map(([found]) => `${file}: ${found}`),
      );
    expect(offenders).toEqual([]);
  });
});
