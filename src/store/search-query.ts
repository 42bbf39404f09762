import { UsageError } from '../errors.js';
import { COLLECTIONS, type CollectionSlug } from '../vocabulary/collections.js';

/** A ranked full-text search over the mirror's `search_docs` (see docs/schema.md, "Full-text search"). */
export interface SearchQuery {
  /** The words; every one must match (a word ending in `*` matches as a prefix). */
  readonly text: string;
  readonly tenant?: string;
  /** Collection slug as in the API path (`events`). */
  readonly collection?: string;
  readonly limit: number;
}

export interface SearchHit {
  readonly collection: string;
  readonly tenant: string;
  readonly id: string;
  readonly title: string | null;
  /** The best-matching passage, matched words in [brackets]. */
  readonly snippet: string;
  /** The hit's tier plus how well it matches within the tier, in [0, 1) (see `searchMirror`): higher is better. */
  readonly rank: number;
}

/** Collections without a title or name, so not in `search_docs` (frozen by migration 2026-11-23-012). */
const UNSEARCHED: readonly CollectionSlug[] = ['event-instances', 'redirects', 'custom-attributes'];
/** Collections `search_docs` indexes. */
export const SEARCHED_COLLECTIONS: readonly CollectionSlug[] = COLLECTIONS.filter((c) => !UNSEARCHED.includes(c));

/**
 * Series and events: a search for a title most likely means one of these. Event instances have no title of their
 * own and are not indexed: an instance is found through its event (`event_instances.event_id`).
 */
export const PRODUCTION = `d.collection IN ('series', 'events')`;

export interface Word {
  /** The word as typed, without its trailing `*`. */
  readonly text: string;
  /** Ended in `*`: its last token matches as a prefix. */
  readonly prefix: boolean;
}

/** The user's words (split on white space; a lone `*` is no word). Throws `US_USAGE` when there is none. */
export function queryWords(text: string): Word[] {
  const words = text.split(/\s+/).filter((w) => w !== '' && w !== '*');
  if (words.length === 0) throw new UsageError('search: give at least one word to look for');
  return words.map((w) => (w.endsWith('*') ? { text: w.slice(0, -1), prefix: true } : { text: w, prefix: false }));
}

/** Accents off, as the index has them (migration 2026-11-23-012). */
export const unaccented = (s: string) => s.normalize('NFD').replace(/[\u0300-\u036f]/g, '');
/** A word's tokens as FTS5's `unicode61` tokenizer reads them: runs of letters and digits, lower case, no accents. */
export const tokens = (s: string): string[] =>
  unaccented(s)
    .toLowerCase()
    .match(/[\p{L}\p{N}]+/gu) ?? [];
/** The length of the words as the index reads them (tokens, one space apart): how much of a title they can make up. */
export const wordsLength = (words: readonly Word[]): number => words.flatMap((w) => tokens(w.text)).join(' ').length;

/**
 * A snippet of `text` around the first word the query matches, as SQLite's FTS5 `snippet()` gives one: `size`
 * tokens, each matched token in `[` `]`, `…` where text is cut. Matching is the index's (accents and case ignored, a
 * prefix word's last token as a prefix), so the snippet always shows a matched word, accented or not. Text with no
 * match (none is expected) gives its first `size` tokens.
 */
export function snippetOf(text: string, words: readonly Word[], size = 12): string {
  const spans = [...text.matchAll(/[\p{L}\p{N}\p{M}]+/gu)];
  if (spans.length === 0) return text;
  const wanted = words.map((w) => ({ ts: tokens(w.text), prefix: w.prefix }));
  const matches = (token: string) =>
    wanted.some(({ ts, prefix }) =>
      ts.some((t, i) => (prefix && i === ts.length - 1 ? token.startsWith(t) : token === t)),
    );
  const hit = spans.map((m) => matches(tokens(m[0]).join('')));
  const first = Math.max(0, hit.indexOf(true));
  const start = Math.max(0, Math.min(first - Math.floor(size / 4), spans.length - size));
  const end = Math.min(spans.length, start + size);
  let out = start > 0 ? '…' : '';
  for (let i = start; i < end; i++) {
    const m = spans[i] as RegExpMatchArray;
    const next = spans[i + 1];
    const word = hit[i] ? `[${m[0]}]` : m[0];
    // The text between this token and the next as written (spaces, punctuation), up to the window's end.
    const gap = i + 1 < end && next ? text.slice((m.index ?? 0) + m[0].length, next.index) : '';
    out += word + gap;
  }
  return end < spans.length ? `${out}…` : out;
}
