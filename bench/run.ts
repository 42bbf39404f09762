/**
 * `npm run bench`: runs every benchmark in one process session and writes docs/benchmarks.md.
 * Each bench module default-exports `() => Promise<string>` returning a markdown section. Ratios that matter are
 * measured within one bench, in the same run, because these machines are noisy.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';

const BENCHES = [
  'sim-list',
  'sim-sync',
  'ingest',
  'sync-requests',
  'sync-memory',
  'sql-export',
  'shared-budget',
  'write-drain',
  'response-cap',
  'pg-ingest',
  'change-feed',
  'search',
  'freshness',
  'watch-fleet',
  'serve',
  'serve-reads',
  'fleet-full',
] as const;
const only = process.argv.slice(2);

const out = fileURLToPath(new URL('../../docs/benchmarks.md', import.meta.url));
// Each section is kept between markers, so running a subset (`npm run bench -- ingest`) replaces only its own.
const marker = (name: string) => `<!-- bench:${name} -->`;
const previous = existsSync(out) ? readFileSync(out, 'utf8') : '';
const kept = (name: string): string | undefined => {
  const start = previous.indexOf(marker(name));
  if (start < 0) return undefined;
  const end = previous.indexOf('<!-- bench:', start + marker(name).length);
  return previous.slice(start + marker(name).length, end < 0 ? undefined : end).trim();
};

const sections: string[] = [];
for (const name of BENCHES) {
  if (only.length > 0 && !only.includes(name)) {
    const old = kept(name);
    if (old) sections.push(`${marker(name)}\n${old}`);
    continue;
  }
  process.stderr.write(`bench ${name}...\n`);
  const started = Date.now();
  try {
    const mod = (await import(`./${name}.js`)) as { default: () => Promise<string> };
    const section = (await mod.default()).trim();
    const took = ((Date.now() - started) / 1000).toFixed(1);
    sections.push(
      `${marker(name)}\n${section}\n\n_${name} took ${took} s on ${new Date().toISOString().slice(0, 10)}._`,
    );
  } catch (err) {
    sections.push(`${marker(name)}\n## ${name}\n\nNot run: ${(err as Error).message}`);
  }
}

const cpu = cpus()[0]?.model ?? 'unknown CPU';
// A subset keeps the header as it stands (notes written into it by hand stay); a whole run writes it anew.
const firstSection = previous.indexOf('<!-- bench:');
const header =
  only.length > 0 && firstSection > 0
    ? `${previous.slice(0, firstSection).trimEnd()}\n`
    : `# Benchmarks

Written by \`npm run bench\` (bench/run.ts) on ${new Date().toISOString().slice(0, 10)}.
Machine: ${cpus().length} × ${cpu}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB RAM, Node ${process.version}, ${process.platform}/${process.arch}.
Targets from the issues are checked as ratios measured in the same run; absolute figures are indicative only.
`;
writeFileSync(out, `${header}\n${sections.join('\n\n')}\n`);
process.stdout.write(`${header}\n${sections.join('\n\n')}\n`);
