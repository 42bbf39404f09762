import type { ReadAnswer } from './read-answer.js';

/** At most this many answers are kept… */
const MAX_ANSWERS = 20_000;
/** …and at most this many bytes of their bodies. */
const MAX_BYTES = 64 * 2 ** 20;

/**
 * Whole answers to reads, kept while the mirror's change mark holds (SQLite's `data_version`: any other
 * connection's commit moves it, and every answer is dropped then). The same read asked again, by the same or another
 * client, is answered from here without a statement, a parse or a digest. Only complete answers (200, and the
 * upstream's 404) are kept, each under the mark read before its first statement: it holds the mirror as of that mark
 * or later, and a later state has moved the mark, so no read finds it kept once the mirror has changed. An engine
 * with no such mark (PostgreSQL) keeps nothing.
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

  /**
   * Keeps `answer` for `key`, read after `mark` was (every statement of it). An answer of a mark that has moved
   * since (a read that began before the mirror changed) is not kept: a newer mark's answers are not dropped for it.
   */
  set(mark: string, key: string, answer: ReadAnswer): void {
    if (answer.status !== 200 && answer.status !== 404) return;
    if (this.mark !== null && mark !== this.mark) return;
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
