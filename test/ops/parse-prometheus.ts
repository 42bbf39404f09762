/** A parsed Prometheus text exposition: each metric family's type, and its samples. */
export interface Exposition {
  readonly types: Map<string, string>;
  readonly samples: { name: string; labels: Record<string, string>; value: number }[];
}

/** Parses the Prometheus text format (0.0.4) strictly enough to catch a malformed line. */
export function parsePrometheus(text: string): Exposition {
  const types = new Map<string, string>();
  const samples: Exposition['samples'] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const type = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (type) {
      types.set(type[1]!, type[2]!);
      continue;
    }
    if (line.startsWith('# HELP ') || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)( \d+)?$/.exec(line);
    if (!m) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[3] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    const raw = m[4]!;
    const value = raw === '+Inf' ? Infinity : raw === '-Inf' ? -Infinity : Number(raw);
    // Go's ParseFloat, which Prometheus uses, takes NaN in any case (prom-client writes `Nan`).
    if (Number.isNaN(value) && raw.toLowerCase() !== 'nan') throw new Error(`bad sample value: ${line}`);
    samples.push({ name: m[1]!, labels, value });
  }
  return { types, samples };
}

/** The value of the one sample of `name` whose labels include `labels`, or undefined. */
export function sampleValue(e: Exposition, name: string, labels: Record<string, string> = {}): number | undefined {
  return e.samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
}
