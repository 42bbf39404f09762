/** Edit distance with adjacent transpositions (optimal string alignment), case-insensitive. */
function distance(a: string, b: string): number {
  const s = a.toLowerCase();
  const t = b.toLowerCase();
  const d: number[][] = Array.from({ length: s.length + 1 }, (_, i) => [i]);
  for (let j = 1; j <= t.length; j++) (d[0] as number[])[j] = j;
  for (let i = 1; i <= s.length; i++) {
    const row = d[i] as number[];
    const prev = d[i - 1] as number[];
    for (let j = 1; j <= t.length; j++) {
      const cost = s[i - 1] === t[j - 1] ? 0 : 1;
      let v = Math.min((prev[j] as number) + 1, (row[j - 1] as number) + 1, (prev[j - 1] as number) + cost);
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1])
        v = Math.min(v, ((d[i - 2] as number[])[j - 2] as number) + 1);
      row[j] = v;
    }
  }
  return (d[s.length] as number[])[t.length] as number;
}

/**
 * The candidate `word` was most likely meant to be: the closest by edit distance (case ignored), when it is close
 * enough to be a typo (at most a third of the word's length, and at most 3 edits). `undefined` when none is.
 */
export function closestMatch(word: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  const limit = Math.min(3, Math.max(1, Math.floor(word.length / 3)));
  for (const c of candidates) {
    // A word that starts with a candidate (or the other way round) is one too: `warning` for `warn`.
    const w = word.toLowerCase();
    const k = c.toLowerCase();
    const dist = k.length >= 3 && w.length >= 3 && (w.startsWith(k) || k.startsWith(w)) ? 1 : distance(word, c);
    if (dist < bestDistance && dist <= limit) {
      best = c;
      bestDistance = dist;
    }
  }
  return best;
}

/** ` (did you mean "x"?)`, or nothing: for messages naming an unknown word. */
export const didYouMean = (word: string, candidates: Iterable<string>, quote = '"'): string => {
  const m = closestMatch(word, candidates);
  return m === undefined ? '' : ` (did you mean ${quote}${m}${quote}?)`;
};
