import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { writeConfig } from '../helpers/operator.js';
import { startRedis } from '../helpers/redis-server.js';
import { tempDir } from '../helpers/sync-harness.js';
import { startWorker } from '../helpers/understudy-process.js';

interface Panel {
  readonly type: string;
  readonly title: string;
  readonly targets?: { readonly expr?: string }[];
  readonly panels?: Panel[];
}

const dashboard = JSON.parse(
  readFileSync(new URL('../../config/grafana/understudy.json', import.meta.url), 'utf8'),
) as { panels: Panel[]; templating: unknown };

/** Every panel that draws something, rows opened. */
const panels = (list: readonly Panel[]): Panel[] =>
  list.flatMap((p) => [...panels(p.panels ?? []), ...(p.type === 'row' ? [] : [p])]);

/** The metric names a PromQL expression reads (label values and label names left out). */
const metricsOf = (expr: string): string[] =>
  expr.replace(/"[^"]*"/g, '').match(/\b(understudy|process|nodejs)_[A-Za-z0-9_:]*/g) ?? [];

describe('config/grafana/understudy.json', () => {
  it('queries, in every panel, only metrics a running worker exports on /metrics', async () => {
    const redis = await startRedis();
    onTestFinished(() => redis.stop());
    const dir = tempDir();
    const config = writeConfig(dir, 'c.json', {
      baseUrl: 'http://127.0.0.1:9',
      database: join(dir, 'w.db'),
      tenants: [{ slug: 'a', apiKeyEnv: 'K', schedule: { incrementalEveryMinutes: 0, fullCron: null } }],
    });
    const worker = startWorker(config, ['--http', '0'], { K: 'some-key-some-key-some-key', REDIS_URL: redis.url });
    const { port } = await worker.opsPort();
    const exported = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    await worker.stop();
    const names = new Set([...exported.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1] as string));

    const drawn = panels(dashboard.panels);
    expect(drawn.length).toBeGreaterThanOrEqual(3);
    const missing: string[] = [];
    for (const p of drawn) {
      const used = (p.targets ?? []).flatMap((t) => metricsOf(t.expr ?? ''));
      expect(used.length, `panel "${p.title}" queries no metric`).toBeGreaterThan(0);
      for (const m of used)
        if (!names.has(m) && !names.has(m.replace(/_(bucket|sum|count)$/, ''))) missing.push(`${p.title}: ${m}`);
    }
    expect(missing).toEqual([]);
  });
});
