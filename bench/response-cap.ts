/**
 * Response size cap (issue 10 item 6): a 300 MB list body must cost one request, a final error and a peak RSS
 * under 200 MB for the whole `understudy sync` process. Real parts: `understudy sim` in a process of its own with
 * its `huge` fault, the built CLI measured by `/usr/bin/time -f %M` (maximum resident set size, kB).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';

const BIN = fileURLToPath(new URL('../../bin/understudy', import.meta.url));
const BYTES = 300 * 1024 * 1024;

async function startSim(): Promise<{ url: string; slug: string; key: string; close: () => Promise<void> }> {
  const child = spawn(process.execPath, [BIN, 'sim', '--port', '0', '--tenants', '1', '--records', '40'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const found = await new Promise<{ url: string; slug: string; key: string }>((resolve, reject) => {
    let seen = '';
    child.stdout?.on('data', (d: Buffer) => {
      seen += d.toString();
      const url = /listening on (http:\/\/\S+)/.exec(seen)?.[1];
      const t = /^tenant (\S+) key (\S+)$/m.exec(seen);
      if (url && t) resolve({ url, slug: t[1] as string, key: t[2] as string });
    });
    child.once('exit', () => reject(new Error(`understudy sim exited at start: ${seen.slice(-200)}`)));
  });
  child.stdout?.resume();
  return {
    ...found,
    close: async () => {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Runs a full `understudy sync` under /usr/bin/time; returns its exit code and peak RSS in kB. */
async function measuredSync(sim: { url: string; slug: string; key: string }, db: string, rssFile: string) {
  const child = spawn(
    '/usr/bin/time',
    [
      '-f',
      '%M',
      '-o',
      rssFile,
      process.execPath,
      BIN,
      'sync',
      '--base-url',
      sim.url,
      '--tenant',
      sim.slug,
      '--db',
      db,
      '--full',
    ],
    { stdio: 'ignore', env: { ...process.env, PARTNERS_API_KEY: sim.key, LOG_LEVEL: 'silent' } },
  );
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, rssKb: Number(readFileSync(rssFile, 'utf8').trim().split('\n').at(-1)) };
}

export default async function bench(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'understudy-bench-cap-'));
  const sim = await startSim();
  const admin = async (method: 'POST' | 'GET', path: string, body?: unknown) => {
    const res = await request(`${sim.url}/__sim/${path}`, {
      method,
      ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
    });
    return res.body.json();
  };
  try {
    const db = join(dir, 'm.db');
    const plain = await measuredSync(sim, db, join(dir, 'rss0'));
    await admin('POST', 'reset');
    await admin('POST', 'faults', { kind: 'huge', bytes: BYTES, count: 5, match: { path: 'event-instances' } });
    const huge = await measuredSync(sim, db, join(dir, 'rss1'));
    const eventRequests = async () =>
      ((await admin('GET', 'request-log')) as { path: string }[]).filter((e) => e.path.includes('event-instances'))
        .length;
    const requests = await eventRequests();
    // Without Content-Length the cap is met while reading: the first 32 MiB are read, then the connection dropped.
    await admin('POST', 'reset');
    const fault = { kind: 'huge', bytes: BYTES, chunked: true, count: 5, match: { path: 'event-instances' } };
    await admin('POST', 'faults', fault);
    const chunked = await measuredSync(sim, db, join(dir, 'rss2'));
    const chunkedRequests = await eventRequests();
    const ok = (r: { code: number | null; rssKb: number }, n: number) =>
      r.code !== 0 && n === 1 && r.rssKb < 200 * 1024;
    return `## Response size cap

A full \`understudy sync\` of one simulator tenant (all collections), then the same with every event-instances
request answered by a ${BYTES / 2 ** 20} MiB body (the simulator's \`huge\` fault, with \`Content-Length\`), default
\`maxResponseBytes\` (32 MiB). Peak RSS of the whole sync process, from \`/usr/bin/time -f %M\`.

| run | exit | event-instances requests | peak RSS |
|---|---:|---:|---:|
| plain sync | ${plain.code} | — | ${(plain.rssKb / 1024).toFixed(0)} MB |
| 300 MiB body, \`Content-Length\` | ${huge.code} | ${requests} | ${(huge.rssKb / 1024).toFixed(0)} MB |
| 300 MiB body, chunked | ${chunked.code} | ${chunkedRequests} | ${(chunked.rssKb / 1024).toFixed(0)} MB |

- ${ok(huge, requests) && ok(chunked, chunkedRequests) ? '**met**' : '**not met**'}: a final error (non-zero exit), one request, peak RSS under 200 MB, in both cases.`;
  } finally {
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
