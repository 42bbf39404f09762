import type { ReadAnswer } from './read-answer.js';

/** At most this many answers are kept… */
const MAX_ANSWERS = 20_000;
/** …and at most this many bytes of their bodies. */
const MAX_BYTES = 64 * 2 ** 20;

/**
 * Whole answers to reads, kept while the mirror's change mark holds (SQLite's `data_version`: any other
 * connection's commit moves it, and every answer is dropped then). The same read asked again, by the same or another
 * client, is answered from here without a statement, a parse or a digest. Only complete answers (200, and the
 * upstream's 404) are kept, and only when the mark was the same before and after the read was answered, so a kept
 * answer never mixes two states of the mirror. An engine with no such mark (PostgreSQL) keeps nothing.
 * The least recently used answer goes first past the bounds.
 */
export class KeptAnswers {
  private mark: string | null = null;
  private readonly answers = new Map<string, ReadAnswer>();
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

  /** Keeps `answer` for `key`, read entirely under `mark` (the caller checks the mark did not move meanwhile). */
  set(mark: string, key: string, answer: ReadAnswer): void {
    if (answer.status !== 200 && answer.status !== 404) return;
    if (mark !== this.mark) this.clear(mark);
    const size = answer.body?.length ?? 0;
    if (size > MAX_BYTES / 16) return;
    const old = this.answers.get(key);
    if (old) this.drop(key, old);
    this.answers.set(key, answer);
    this.bytes += size;
    for (const [k, a] of this.answers) {
      if (this.answers.size <= MAX_ANSWERS && this.bytes <= MAX_BYTES) break;
      this.drop(k, a);
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
