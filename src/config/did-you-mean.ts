import { editDistance } from '../vocabulary/edit-distance.js';

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
    const dist = k.length >= 3 && w.length >= 3 && (w.startsWith(k) || k.startsWith(w)) ? 1 : editDistance(word, c);
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
