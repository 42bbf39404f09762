import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/sim/start-simulator.js';
import { collect } from '../helpers/run-cli.js';

/**
 * docs/simulator.md shows one `curl` per kind of request, each data request with its `Authorization` header; every
 * one of them runs here, in order, against a simulator, with the placeholders filled in.
 */
const text = readFileSync(new URL('../../docs/simulator.md', import.meta.url), 'utf8');
const CURLS = [...text.matchAll(/```sh\n([\s\S]*?)```/g)]
  .flatMap((m) => (m[1] as string).replace(/\\\n\s*/g, ' ').split('\n'))
  .filter((line) => line.startsWith('curl '));
const ORIGIN = 'http://127.0.0.1:4010';

let sim: Simulator;
let fill: (line: string) => string;
beforeAll(async () => {
  sim = await startSimulator({ port: 0, seed: 7, records: 10, readLimit: 0, writeLimit: 0 });
  const t = sim.tenants[0] as { slug: string; key: string };
  const first = (c: Parameters<Simulator['controls']['docs']>[1], field = 'id') =>
    String(sim.controls.docs(t.slug, c)[0]?.[field]);
  const values: Record<string, string> = {
    '<KEY>': t.key,
    '<TENANT>': t.slug,
    '<SERIES_ID>': first('series'),
    '<SEASON_ID>': first('seasons'),
    '<EVENT_INSTANCE_ID>': first('event-instances'),
    '<FILENAME>': first('media', 'filename'),
  };
  fill = (line) => Object.entries(values).reduce((l, [k, v]) => l.split(k).join(v), line.split(ORIGIN).join(sim.url));
});
afterAll(async () => {
  await sim?.close();
});

describe('the curl examples of docs/simulator.md', () => {
  it('show every kind of request, each data request with its Authorization header', () => {
    const kinds: [string, RegExp][] = [
      ['list', /^curl (?!.*-X ).*\/<TENANT>\/series\?/],
      ['read by id', /^curl (?!.*-X ).*\/series\/<SERIES_ID>/],
      ['create', /-X POST .*\/<TENANT>\/series'/],
      ['update (PATCH)', /-X PATCH .*\/event-instances\/<EVENT_INSTANCE_ID>'/],
      ['update (PUT)', /-X PUT .*\/seasons\/<SEASON_ID>'/],
      ['delete', /-X DELETE .*\/event-instances\/<EVENT_INSTANCE_ID>'/],
      ['bulk', /-X PATCH .*\/series\/custom-attributes'/],
      ['theme-settings schema', /\/events\/theme-settings\/schema'/],
      ['no key: 401', /^curl (?!.*Authorization).*\/<TENANT>\/.*# 401/],
      ['public OpenAPI', /\/partners\/openapi'/],
      ['media delivery', /\/media\/<TENANT>\/<FILENAME>'/],
      ['a fault', /-X POST .*\/__sim\/faults'/],
      ['mutate', /-X POST .*\/__sim\/mutate'/],
      ['counters', /\/__sim\/counters'/],
      ['reset', /-X POST .*\/__sim\/reset'/],
      ['rate limits', /-X PUT .*\/__sim\/rate-limits'/],
    ];
    for (const [kind, pattern] of kinds)
      expect(
        CURLS.some((c) => pattern.test(c)),
        kind,
      ).toBe(true);
    for (const c of CURLS.filter((l) => l.includes('/partners/2026-02/<TENANT>/') && !l.includes('# 401')))
      expect(c).toContain(`-H 'Authorization: users API-Key <KEY>'`);
  });

  it.each(CURLS.map((c) => [c]))('runs %s', async (line) => {
    const r = await collect(spawn('bash', ['-c', fill(line)], { stdio: ['ignore', 'pipe', 'pipe'] }));
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const status = /# (\d{3})\b/.exec(line)?.[1];
    if (status) expect(r.stdout.trim()).toBe(status);
  });
});
