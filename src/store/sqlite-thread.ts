import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import {
  type CompiledQuery,
  type DatabaseConnection,
  type Driver,
  CompiledQuery as Query,
  type QueryResult,
  SqliteDialect,
} from 'kysely';

/**
 * A writable mirror's SQLite connection, held by a worker thread: statements run there while the main thread goes
 * on reading the next page from the upstream and parsing it. better-sqlite3 is synchronous, so on the main thread a
 * page's commit (tens of milliseconds) would also stop the socket of the page fetched ahead from being read: the
 * "fetch page N+1 while page N commits" of the sync would then overlap only on paper.
 *
 * One connection, one thread, one statement at a time (as Kysely's own SQLite driver: a mutex hands the connection
 * to one caller, for one query or one whole transaction). The thread is the connection: the process holds one
 * handle on the file, and closing the database ends the thread.
 */

/** What the thread runs: plain CommonJS, so it loads the same way from the build and under the test runner. */
const THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.module);
const plain = (e) => ({ name: e && e.name, message: String(e && e.message || e), code: e && e.code });
let db;
try {
  db = new Database(workerData.path);
  for (const p of workerData.pragmas) db.pragma(p);
} catch (e) {
  parentPort.postMessage({ id: 0, error: plain(e) });
  process.exit(0);
}
parentPort.postMessage({ id: 0 });
// Each statement prepared once per SQL text (a page's multi-row upsert is long: preparing it for every page would
// cost more than running it); the least recently used is dropped first.
const cache = new Map();
const prepare = (sql) => {
  let st = cache.get(sql);
  if (st) cache.delete(sql); else st = db.prepare(sql);
  cache.set(sql, st);
  if (cache.size > ${256}) cache.delete(cache.keys().next().value);
  return st;
};
const bind = (ps) => ps.map((v) => (v instanceof Uint8Array && !Buffer.isBuffer(v) ? Buffer.from(v.buffer, v.byteOffset, v.byteLength) : v));
parentPort.on('message', (m) => {
  if (m.close) {
    try { cache.clear(); db.close(); parentPort.postMessage({ id: m.id }); }
    catch (e) { parentPort.postMessage({ id: m.id, error: plain(e) }); }
    return;
  }
  try {
    const st = prepare(m.sql);
    if (st.reader) parentPort.postMessage({ id: m.id, rows: st.all(bind(m.params)) });
    else {
      const r = st.run(bind(m.params));
      parentPort.postMessage({ id: m.id, changes: r.changes, insertId: r.lastInsertRowid });
    }
  } catch (e) {
    parentPort.postMessage({ id: m.id, error: plain(e) });
  }
});
`;

interface Reply {
  readonly id: number;
  readonly rows?: unknown[];
  readonly changes?: number;
  readonly insertId?: number | bigint;
  readonly error?: { readonly name?: string; readonly message: string; readonly code?: string };
}

/** An error of the thread's connection, as better-sqlite3 threw it (name, message and code kept). */
export class SqliteThreadError extends Error {
  readonly code: string | undefined;
  constructor(e: NonNullable<Reply['error']>) {
    super(e.message);
    this.name = e.name ?? 'SqliteError';
    this.code = e.code;
  }
}

const betterSqlite3 = createRequire(import.meta.url).resolve('better-sqlite3');

/** The thread and its one connection. */
export class SqliteThread {
  private readonly worker: Worker;
  private readonly waiting = new Map<number, { resolve: (r: Reply) => void; reject: (e: Error) => void }>();
  private next = 1;
  private dead: Error | null = null;
  private closing: Promise<void> | undefined;

  private constructor(path: string, pragmas: readonly string[]) {
    // No inherited flags: a parent run as `node --input-type=module -e …` would make the thread's CommonJS a module.
    this.worker = new Worker(THREAD, {
      eval: true,
      execArgv: [],
      workerData: { path, pragmas, module: betterSqlite3 },
    });
    // Idle, the thread does not keep the process alive; a statement in flight does (see call).
    this.worker.unref();
    this.worker.on('message', (r: Reply) => this.settle(r));
    this.worker.on('error', (err) => this.fail(err));
    this.worker.on('exit', (code) => this.fail(new Error(`the SQLite thread ended (exit ${code})`)));
  }

  /** Starts the thread and opens `path` in it with `pragmas`; rejects with the open's error. */
  static async open(path: string, pragmas: readonly string[]): Promise<SqliteThread> {
    const thread = new SqliteThread(path, pragmas);
    const opened = await thread.await(0);
    if (opened.error) {
      await thread.worker.terminate();
      throw new SqliteThreadError(opened.error);
    }
    return thread;
  }

  /** Runs one statement on the thread's connection. */
  async execute<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const r = await this.call({ sql: query.sql, params: query.parameters });
    if (r.rows) return { rows: r.rows as R[] };
    return {
      rows: [],
      numAffectedRows: BigInt(r.changes ?? 0),
      ...(r.insertId !== undefined ? { insertId: BigInt(r.insertId) } : {}),
    };
  }

  /** Closes the connection (checkpointing the WAL, as SQLite does when its last connection closes) and ends the thread. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      if (!this.dead) await this.call({ close: true }).catch(() => undefined);
      await this.worker.terminate();
    })();
    return this.closing;
  }

  private async call(message: object): Promise<Reply> {
    if (this.dead) throw this.dead;
    const id = this.next++;
    const reply = this.await(id);
    if (this.waiting.size === 1) this.worker.ref();
    this.worker.postMessage({ id, ...message });
    const r = await reply;
    if (r.error) throw new SqliteThreadError(r.error);
    return r;
  }

  private await(id: number): Promise<Reply> {
    return new Promise<Reply>((resolve, reject) => this.waiting.set(id, { resolve, reject }));
  }

  private settle(r: Reply): void {
    const w = this.waiting.get(r.id);
    if (!w) return;
    this.waiting.delete(r.id);
    if (this.waiting.size === 0) this.worker.unref();
    w.resolve(r);
  }

  private fail(err: Error): void {
    this.dead ??= err;
    for (const w of this.waiting.values()) w.reject(err);
    this.waiting.clear();
  }
}

/** Kysely's SQLite dialect (its compiler, adapter and introspector) with the driver below. */
export class ThreadedSqliteDialect extends SqliteDialect {
  constructor(private readonly thread: SqliteThread) {
    super({ database: () => Promise.reject(new Error('unused: the thread holds the connection')) });
  }

  override createDriver(): Driver {
    return new ThreadedSqliteDriver(this.thread);
  }
}

/** As Kysely's SqliteDriver: one connection, handed to one caller at a time; statements go to the thread. */
class ThreadedSqliteDriver implements Driver {
  private locked: Promise<void> | undefined;
  private unlock: (() => void) | undefined;
  private readonly connection: DatabaseConnection;

  constructor(private readonly thread: SqliteThread) {
    this.connection = {
      executeQuery: <R>(q: CompiledQuery) => thread.execute<R>(q),
      streamQuery: <R>(q: CompiledQuery): AsyncIterableIterator<QueryResult<R>> => {
        // Not used on a writable mirror (reads that stream use a read-only connection): one result, all rows.
        const all = thread.execute<R>(q);
        return (async function* () {
          yield await all;
        })();
      },
    };
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    while (this.locked) await this.locked;
    this.locked = new Promise<void>((resolve) => {
      this.unlock = resolve;
    });
    return this.connection;
  }

  async releaseConnection(): Promise<void> {
    const unlock = this.unlock;
    this.locked = undefined;
    this.unlock = undefined;
    unlock?.();
  }

  async beginTransaction(c: DatabaseConnection): Promise<void> {
    await c.executeQuery(Query.raw('begin'));
  }

  async commitTransaction(c: DatabaseConnection): Promise<void> {
    await c.executeQuery(Query.raw('commit'));
  }

  async rollbackTransaction(c: DatabaseConnection): Promise<void> {
    await c.executeQuery(Query.raw('rollback'));
  }

  async destroy(): Promise<void> {
    await this.thread.close();
  }
}
