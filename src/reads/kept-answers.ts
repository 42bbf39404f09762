import type { ReadAnswer } from './read-answer.js';

/** At most this many answers are kept… */
const MAX_ANSWERS = 20_000;
/** …and at most this many bytes of their bodies. */
const MAX_BYTES = 64 * 2 ** 20;
/** Bits of the sketch of reads asked once (128 KiB)… */
const SEEN_BITS = 2 ** 20;
/** …emptied once this many reads have been marked in it (at most an eighth of its bits set: few false hits). */
const SEEN_MARKS = SEEN_BITS / 8;

/** FNV-1a over the UTF-16 code units of `s`: a 32-bit hash without an allocation. */
function hashOf(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/**
 * Reads asked at least once lately, as bits of a hash (a read's bit may be another's: it is then kept a read early).
 * Answers are kept only for a read asked before: keeping the answer of every read, most of them never asked again,
 * cost more than it saved (each kept answer outlives V8's young generation and is copied out of it, then dropped
 * from the old one), and a read asked twice is the one likely to be asked again.
 */
class AskedBefore {
  private readonly bits = new Uint32Array(SEEN_BITS / 32);
  private marks = 0;

  /** Whether `key` was asked before (since the sketch was last emptied); marks it asked. */
  check(key: string): boolean {
    const h = hashOf(key) % SEEN_BITS;
    const word = h >>> 5;
    const bit = 1 << (h & 31);
    const w = this.bits[word] as number;
    if ((w & bit) !== 0) return true;
    if (++this.marks > SEEN_MARKS) {
      this.bits.fill(0);
      this.marks = 1;
    }
    this.bits[word] = (this.bits[word] as number) | bit;
    return false;
  }
}

/**
 * Whole answers to reads, kept while the mirror's change mark holds (SQLite's `data_version`: any other
 * connection's commit moves it, and every answer is dropped then). A read asked again, by the same or another
 * client, is answered from here without a statement, a parse or a digest: from the third time it is asked, as an
 * answer is kept the second time (`AskedBefore`; which reads were asked survives a commit, so a read asked often is
 * kept again at its first ask after one). Only complete answers (200, and the upstream's 404) are kept, each under
 * the mark read before its first statement: it holds the mirror as of that mark or later, and a later state has moved
 * the mark, so no read finds it kept once the mirror has changed. An engine with no such mark (PostgreSQL) keeps
 * nothing. The least recently used answer goes first past the bounds.
 */
export class KeptAnswers {
  private mark: string | null = null;
  private readonly answers = new Map<string, ReadAnswer>();
  private readonly asked = new AskedBefore();
  private bytes = 0;

  /** The answer kept for `key` under `mark`, or undefined (every answer is dropped when the mark has moved). */
  get(mark: string, key: string): ReadAnswer | undefined {
    if (mark !== this.mark) {
      this.clear(mark);
      return undefined;
    }
    const hit = this.answers.get(key);
    if (hit) {
      // Most recently used last.
      this.answers.delete(key);
      this.answers.set(key, hit);
    }
    return hit;
  }

  /**
   * Keeps `answer` for `key` if it was asked before, read after `mark` was (every statement of it). An answer of a
   * mark that has moved since (a read that began before the mirror changed) is not kept: a newer mark's answers are
   * not dropped for it.
   */
  set(mark: string, key: string, answer: ReadAnswer): void {
    if (answer.status !== 200 && answer.status !== 404) return;
    if (this.mark !== null && mark !== this.mark) return;
    if (!this.asked.check(key)) return;
    if (mark !== this.mark) this.clear(mark);
    const size = answer.body?.length ?? 0;
    if (size > MAX_BYTES / 16) return;
    const old = this.answers.get(key);
    if (old) this.drop(key, old);
    this.answers.set(key, answer);
    this.bytes += size;
    while (this.answers.size > MAX_ANSWERS || this.bytes > MAX_BYTES) {
      const oldest = this.answers.keys().next().value as string;
      this.drop(oldest, this.answers.get(oldest) as ReadAnswer);
    }
  }

  get size(): number {
    return this.answers.size;
  }

  private drop(key: string, answer: ReadAnswer): void {
    this.answers.delete(key);
    this.bytes -= answer.body?.length ?? 0;
  }

  private clear(mark: string): void {
    this.answers.clear();
    this.bytes = 0;
    this.mark = mark;
  }
}
