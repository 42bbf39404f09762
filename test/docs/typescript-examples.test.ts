import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appDir, compileApp } from '../helpers/compile-app.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';
import { collect } from '../helpers/run-cli.js';
import { idOf, writeHarness } from '../writes/write-harness.js';

/**
 * Every TypeScript example in README.md and docs/*.md is compiled as an app would compile it (the package under
 * node_modules/understudy, resolved through its `exports`, tsc strict with nodenext) and run against the simulator,
 * a Redis of its own and a write worker. The examples use the tenant `harbour-opera`, event instances '42' and '43'
 * and series '7' and '8': the run puts the simulator's tenant and records in their place.
 */
const root = fileURLToPath(new URL('../../', import.meta.url));
const pages = ['README.md', ...readdirSync(join(root, 'docs')).map((f) => `docs/${f}`)].filter((f) =>
  f.endsWith('.md'),
);

interface Example {
  readonly name: string;
  readonly code: string;
}
const examples: Example[] = pages.flatMap((page) =>
  [...readFileSync(join(root, page), 'utf8').matchAll(/^```(?:ts|typescript)[ \t]*\n([\s\S]*?)^```/gm)].map((m, i) => ({
    name: `${page.replace(/\W+/g, '-')}-${i + 1}`,
    code: m[1] ?? '',
  })),
);

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis({ own: true });
});
afterAll(async () => {
  await redis?.stop();
});

describe('the TypeScript examples of README and docs', () => {
  it('are written as an app writes them: importing the package by its name', () => {
    expect(examples.length).toBeGreaterThanOrEqual(5);
    for (const e of examples) expect(e.code, e.name).toMatch(/from 'understudy';/);
    expect(examples.map((e) => e.code).join('\n')).not.toMatch(/understudy\/dist|\.\/src\//);
  });

  it('compile against the package exports and run to completion against the simulator', async () => {
    // The default prefix and REDIS_URL, as the examples leave them.
    const h = await writeHarness({ redisUrl: redis.url, prefix: 'understudy', sim: { records: 4 } });
    await h.startWorker();
    const [ei1, ei2] = h.upstream('event-instances').map(idOf);
    const [s1, s2] = h.upstream('series').map(idOf);
    const values: Record<string, string> = {
      'harbour-opera': h.slug,
      '42': ei1 ?? '',
      '43': ei2 ?? '',
      '7': s1 ?? '',
      '8': s2 ?? '',
    };
    const app = appDir();
    const files = examples.map((e) => {
      const file = join(app, `${e.name}.ts`);
      writeFileSync(
        file,
        e.code.replace(/'(harbour-opera|42|43|7|8)'/g, (_, v: string) => `'${values[v]}'`),
      );
      return file;
    });
    expect(compileApp(files, { emit: true })).toEqual([]);

    for (const e of examples) {
      const child = spawn(process.execPath, [join(app, `${e.name}.js`)], {
        cwd: app,
        env: { ...process.env, REDIS_URL: redis.url },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const run = await collect(child);
      // Each exits by itself, its writes applied: an example that left a connection open would not end.
      expect({ example: e.name, code: run.code, stderr: run.stderr }).toEqual({ example: e.name, code: 0, stderr: '' });
    }
  });
});
