import { once } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import { collect, runCli, spawnCli } from '../helpers/run-cli.js';

describe('understudy sim', () => {
  it('prints its URL and one "tenant <slug> key <KEY>" line per tenant, serves, and exits 0 on SIGTERM', async () => {
    const child = spawnCli([
      'sim',
      '--port',
      '0',
      '--seed',
      '3',
      '--tenants',
      '3',
      '--records',
      '5',
      '--read-limit',
      '0',
    ]);
    const done = collect(child);
    let out = '';
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
    });
    await vi.waitFor(() => expect(out.split('\n').filter((l) => l.startsWith('tenant '))).toHaveLength(3), {
      timeout: 20_000,
      interval: 50,
    });
    const lines = out.trim().split('\n');
    const url = /(http:\/\/127\.0\.0\.1:\d+)/.exec(lines[0] ?? '')?.[1];
    expect(url).toBeDefined();
    const m = /^tenant ([a-z-]+) key ([A-Za-z0-9_-]{24,})$/.exec(lines[1] ?? '');
    expect(m).not.toBeNull();
    // Five series, one of them never published: draft=true reads count it.
    const r = await fetch(`${url}/partners/2026-02/${m?.[1]}/series?limit=1&draft=true`, {
      headers: { authorization: `users API-Key ${m?.[2]}` },
    });
    expect(r.status).toBe(200);
    expect(((await r.json()) as { totalDocs: number }).totalDocs).toBe(5);
    child.kill('SIGTERM');
    const res = await done;
    expect(res.code).toBe(0);
  });

  it('exits 2 with a one-line reason on bad flags', async () => {
    for (const args of [['--routes', 'some'], ['--port', 'x'], ['--nope'], ['--key', 'bad']]) {
      const r = await runCli(['sim', ...args]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
    }
  });

  it('takes --key overrides', async () => {
    const probe = spawnCli(['sim', '--port', '0', '--tenants', '1', '--records', '2']);
    let out = '';
    let err = '';
    probe.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
    });
    probe.stderr?.on('data', (d: Buffer) => {
      err += d.toString();
    });
    await vi.waitFor(() => expect(out, err).toMatch(/tenant \S+ key/), { timeout: 30_000, interval: 50 });
    probe.kill('SIGINT');
    await once(probe, 'close');
    const slug = /tenant (\S+) key/.exec(out)?.[1] as string;
    const child = spawnCli([
      'sim',
      '--port',
      '0',
      '--tenants',
      '1',
      '--records',
      '2',
      '--key',
      `${slug}=my_fixed_key_1234567890abc`,
    ]);
    let out2 = '';
    child.stdout?.on('data', (d: Buffer) => {
      out2 += d.toString();
    });
    await vi.waitFor(() => expect(out2).toContain(`tenant ${slug} key my_fixed_key_1234567890abc`), {
      timeout: 20_000,
      interval: 50,
    });
    child.kill('SIGINT');
  });
});
