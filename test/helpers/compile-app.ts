import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { tempDir } from './sync-harness.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

/**
 * A folder laid out as an app that installed this package: node_modules/understudy (the repository: run
 * `npm run build` first, the package's `exports` point into dist/) and an ESM package.json.
 */
export function appDir(): string {
  const app = tempDir();
  mkdirSync(join(app, 'node_modules'));
  symlinkSync(root, join(app, 'node_modules', 'understudy'), 'dir');
  writeFileSync(join(app, 'package.json'), '{"name":"app","private":true,"type":"module"}\n');
  return app;
}

/**
 * Compiles files as such an app would (tsc strict, nodenext, `types: ['node']`), emitting JavaScript next to them
 * when they compile; returns each error as `file(line): message`.
 */
export function compileApp(files: readonly string[], opts: { readonly emit?: boolean } = {}): string[] {
  const program = ts.createProgram(files, {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    skipLibCheck: true,
    types: ['node'],
    typeRoots: [join(root, 'node_modules/@types')],
    noEmit: opts.emit !== true,
    noEmitOnError: true,
  });
  const errors = ts.getPreEmitDiagnostics(program).map((d) => {
    const line = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line + 1 : 0;
    return `${d.file?.fileName.split('/').pop() ?? ''}(${line}): ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`;
  });
  if (opts.emit && errors.length === 0) program.emit();
  return errors;
}
