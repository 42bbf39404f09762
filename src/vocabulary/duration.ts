const UNIT_SECONDS: Readonly<Record<string, number>> = {
  s: 1,
  sec: 1,
  m: 60,
  min: 60,
  h: 3600,
  d: 86_400,
  w: 604_800,
};

/** ISO 8601 durations of days, hours, minutes and seconds: `PT1H30M`, `P1D`. */
const ISO = /^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/i;

/**
 * A duration in seconds: `3600` (seconds), `90s`, `15m`, `2h`, `1d`, `1h30m`, or ISO 8601 (`PT1H30M`, `P1D`); null
 * for anything else. The one reader of durations, for flags (`--max-age`) and the config (`watch.hot`) alike.
 */
export function durationSeconds(text: string): number | null {
  const t = text.trim();
  if (/^\d+(\.\d+)?$/.test(t)) return Number(t);
  const iso = ISO.exec(t);
  if (iso && t.length > 1 && !/T$/i.test(t)) {
    const [, d = '0', h = '0', m = '0', s = '0'] = iso;
    return Number(d) * 86_400 + Number(h) * 3600 + Number(m) * 60 + Number(s);
  }
  return unitSeconds(t);
}

/** `1h30m`, `90 s`: every part a number and a known unit, nothing else between them. */
function unitSeconds(t: string): number | null {
  const parts = [...t.matchAll(/(\d+(?:\.\d+)?)\s*([a-z]+)/gi)];
  const whole = parts.map((p) => p[0]).join('');
  if (parts.length === 0 || whole.replace(/\s/g, '') !== t.replace(/\s/g, '')) return null;
  let total = 0;
  for (const [, n, unit] of parts) {
    const f = UNIT_SECONDS[(unit as string).toLowerCase()];
    if (f === undefined) return null;
    total += Number(n) * f;
  }
  return total;
}
