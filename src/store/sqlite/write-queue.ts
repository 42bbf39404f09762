/**
 * Write transactions of one process on one SQLite file, one after another: connections of one process share its
 * thread, so a second `begin immediate` would block it (up to the busy timeout) while the first transaction waits
 * on a promise. Each dialect holds one, so every connection it opens shares it.
 */
export class WriteQueue {
  #tail: Promise<unknown> = Promise.resolve();

  /** Runs `fn` after every transaction queued before it has settled; resolves or rejects as `fn` does. */
  run<T>(fn: () => Promise<T>): Promise<T> {
    const mine = this.#tail.then(fn, fn);
    this.#tail = mine.catch(() => undefined);
    return mine;
  }
}
