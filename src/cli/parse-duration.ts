import { UsageError } from '../errors.js';

const UNIT_SECONDS: Readonly<Record<string, number>> = {
  s: 1,
  sec: 1,
  m: 60,
  min: 60,
  h: 3600,
  d: 86_400,
  w: 604_800,
};

/**
 * A duration as a number of seconds: `3600` (seconds), `90s`, `15m`, `2h`, `1d`, `1h30m`, or ISO 8601 (`PT1H30M`,
 * `P1D`). Throws `UsageError` naming `flag` for anything else.
 */
export function parseDuration(text: string, flag: string): number {
  const t = text.trim();
  if (/^\d+(\.\d+)?$/.test(t)) return Number(t);
  const iso = /^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/i.exec(t);
  if (iso && t.length > 1 && !/T$/i.test(t)) {
    const [, d = '0', h = '0', m = '0', s = '0'] = iso;
    return Number(d) * 86_400 + Number(h) * 3600 + Number(m) * 60 + Number(s);
  }
  const parts = [...t.matchAll(/(\d+(?:\.\d+)?)\s*([a-z]+)/gi)];
  if (
    parts.length > 0 &&
    parts
      .map((p) => p[0])
      .join('')
      .replace(/\s/g, '') === t.replace(/\s/g, '')
  ) {
    let total = 0;
    for (const [, n, unit] of parts) {
      const f = UNIT_SECONDS[(unit as string).toLowerCase()];
      if (f === undefined) break;
      total += Number(n) * f;
    }
    if (parts.every(([, , unit]) => UNIT_SECONDS[(unit as string).toLowerCase()] !== undefined)) return total;
  }
  throw new UsageError(`${flag} ${text}: not a duration (seconds, or e.g. 90s, 15m, 2h, 1d, 1h30m, PT1H30M)`);
}

/** `in 6 h 09 min`, `in 12 min`, `in 40 s`. */
export function inWords(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `in ${s} s`;
  const min = Math.round(s / 60);
  if (min < 60) return `in ${min} min`;
  return `in ${Math.floor(min / 60)} h ${String(min % 60).padStart(2, '0')} min`;
}
