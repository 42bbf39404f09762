import { CompiledQuery, type Kysely, sql } from 'kysely';
import { isUnderstudyError, UnderstudyError } from '../../errors.js';
import type { CollectionSlug } from '../../vocabulary/collections.js';
import { asDialect, type Dialect } from '../dialect.js';
import { compileFilter } from './compile-filter.js';
import { compileOrder } from './compile-order.js';
import type { Sql } from './json-sql.js';
import { PointingAt, ROW } from './pointing-at.js';
import { readSource } from './read-source.js';
import type { CollectionCopies, DocRow, ListResult, ListSpec, ReadView } from './read-spec.js';
import type { ReadsConnection } from './reads-connection.js';

/**
 * The mirror as the upstream's reads need it (`serve`): every statement read-only, built with Kysely over both
 * engines, filtered, sorted and paged in SQL (nothing loads a collection to filter it), under a time limit.
 */
export interface MirrorReads {
  /** The matching live rows of a list read, in order, one window of them (and the count of every match). */
  list(spec: ListSpec): Promise<ListResult>;
  /** The live rows of `view` with these keys, by key (a key without one is absent). */
  byKeys(view: ReadView, ids: readonly string[]): Promise<ReadonlyMap<string, string>>;
  /**
   * The live row of `view` with this key (null: none), and the copies of its collection as the same statement saw
   * them (null when it cannot tell: no row, on an engine that reads them in the statement).
   */
  byKey(view: ReadView, id: string): Promise<{ doc: string | null; copies: CollectionCopies | null }>;
  /**
   * Keys of the live published `from` records whose top-level `field` holds each target, newest created first
   * (ties by key), at most `limit` of them per target when given.
   */
  pointingAt(
    tenant: string,
    from: CollectionSlug,
    field: string,
    targets: readonly string[],
    limit: number | null,
  ): Promise<ReadonlyMap<string, readonly string[]>>;
  /**
   * The top-level field names the stored records of `view` have (from a sample of them), kept until the mirror
   * changes or, where the engine cannot tell, until the copy's last pass or probe (as `copies` last read it) moves.
   */
  fieldNames(view: ReadView): Promise<ReadonlySet<string>>;
  /**
   * The copies of a collection the mirror holds, from its sync and watch state (kept while the mirror is unchanged).
   * `mark`: the change mark the caller has just read, before any statement of its own (not read again then).
   */
  copies(tenant: string, collection: CollectionSlug, mark?: string | null): Promise<CollectionCopies>;
  /** `copies` of several collections of a tenant at once (one statement where each would be one). */
  copiesOfMany(
    tenant: string,
    collections: readonly CollectionSlug[],
  ): Promise<ReadonlyMap<CollectionSlug, CollectionCopies>>;
  /**
   * The copies a read last saw of a collection where the engine cannot tell, without a statement, whether they still
   * hold (PostgreSQL): a guess that a read confirms with `withCopies` or `byKey` in its own statement. Null before
   * the first read, and on an engine whose `copies` is exact without a statement (SQLite).
   */
  seenCopies(tenant: string, collection: CollectionSlug): CollectionCopies | null;
  /**
   * A mark that moves whenever the mirror may have changed, read without a statement (SQLite's `data_version`);
   * null on an engine that has none (PostgreSQL).
   */
  changeMark(): string | null;
  close(): Promise<void>;
}

type Loose = Kysely<Record<string, Record<string, unknown>>>;
const ALL_ROWS = 9_007_199_254_740_991;
const SAMPLE = 200;
/** `byKeys` keeps its compiled statement for lookups of up to this many keys. */
const KEPT_KEY_COUNTS = 32;

const source = (view: ReadView) => readSource(view, ROW);

const copyKey = (tenant: string, collection: string) => `${tenant}\u0000${collection}`;

/** The copies of a collection as `[k, at]` rows: each variant's last success, then watch's last probe as `''`. */
const copyPairs = (tenant: string, collection: string): Sql =>
  sql`select variant as k, last_success_at as at from sync_state where tenant = ${tenant} and collection = ${collection}
    union all select '' as k, last_fresh_at as at from watch_state where tenant = ${tenant} and collection = ${collection}`;

const copiesOf = (pairs: readonly (readonly [string, string | null])[]): CollectionCopies => ({
  variants: new Map(pairs.filter(([k]) => k !== '')),
  probedAt: pairs.find(([k]) => k === '')?.[1] ?? null,
});

/** `MirrorReads` over a reads connection of either engine. */
class SqlMirrorReads implements MirrorReads {
  private readonly db: Loose;
  private readonly guard: Sql;
  private readonly pointing: PointingAt;
  /** Answers kept while their mark holds: copies by collection, field names by copy. */
  private readonly kept = new Map<string, { mark: string; value: Promise<unknown> }>();
  /** `byKeys`'s statements, by copy and count of keys. */
  private readonly compiled = new Map<string, CompiledQuery>();
  /** The copies last read of each collection: what field names are kept against where the engine has no mark. */
  private readonly lastCopies = new Map<string, CollectionCopies>();

  constructor(private readonly conn: ReadsConnection) {
    this.db = conn.db as unknown as Loose;
    this.guard = conn.guard ? sql` and ${conn.guard}` : sql``;
    this.pointing = new PointingAt(conn, (q) => this.run(q));
  }

  private async run<R>(q: Sql | CompiledQuery): Promise<R[]> {
    try {
      return ('sql' in q ? await this.db.executeQuery<R>(q) : await q.execute(this.db)).rows as R[];
    } catch (err) {
      const e = this.conn.failure(err);
      if (isUnderstudyError(e)) throw e;
      throw new UnderstudyError('US_STORE', `store: a read failed: ${(err as Error).message}`, { cause: err });
    }
  }

  /**
   * Where the engine keeps no exact copies (no change mark), a statement reads them as one more column (`copies`);
   * elsewhere that column is left out and `copies` answers from what is kept.
   */
  private folded(view: ReadView, wanted: boolean | undefined): Sql {
    return wanted && !this.conn.changeMark
      ? sql`, ${this.conn.json.pairsJson(copyPairs(view.tenant, view.collection))} as copies`
      : sql``;
  }

  /** The copies a statement of `view` saw: its `copies` column, or what is kept (exact) where it has none. */
  private async sawCopies(view: ReadView, column: string | undefined): Promise<CollectionCopies | null> {
    if (this.conn.changeMark) return this.copies(view.tenant, view.collection);
    if (column === undefined) return null;
    const copies = copiesOf(JSON.parse(column) as [string, string | null][]);
    this.lastCopies.set(copyKey(view.tenant, view.collection), copies);
    return copies;
  }

  async list(spec: ListSpec): Promise<ListResult> {
    const { table, scope } = source(spec.view);
    const where = spec.filter ? sql` and ${compileFilter(spec.filter, spec.view, ROW, this.conn.json)}` : sql``;
    const total = spec.count ? sql`, count(*) over () as total` : sql``;
    const order = compileOrder(spec.sort, spec.view, ROW, this.conn.json);
    const q = sql`select ${sql.ref(`${ROW}.id`)} as id, ${sql.ref(`${ROW}.doc`)} as doc${total}${this.folded(spec.view, spec.withCopies)} from ${table} where ${scope}${this.guard}${where} order by ${order} limit ${spec.limit ?? ALL_ROWS} offset ${spec.offset}`;
    const rows = await this.run<{ id: unknown; doc: string; total?: number | string; copies?: string }>(q);
    const first = rows[0];
    return {
      rows: rows.map((x): DocRow => ({ id: String(x.id), doc: x.doc })),
      total: spec.count && first ? Number(first.total) : null,
      copies: spec.withCopies ? await this.sawCopies(spec.view, first?.copies) : null,
    };
  }

  async byKeys(view: ReadView, ids: readonly string[]): Promise<ReadonlyMap<string, string>> {
    const out = new Map<string, string>();
    for (let i = 0; i < ids.length; i += 500) {
      const chunk = ids.slice(i, i + 500);
      for (const x of await this.run<{ id: unknown; doc: string }>(this.byKeysStatement(view, chunk, false)))
        out.set(String(x.id), x.doc);
    }
    return out;
  }

  async byKey(view: ReadView, id: string): Promise<{ doc: string | null; copies: CollectionCopies | null }> {
    const [row] = await this.run<{ doc: string; copies?: string }>(this.byKeysStatement(view, [id], true));
    return { doc: row?.doc ?? null, copies: await this.sawCopies(view, row?.copies) };
  }

  /**
   * The statement of `byKeys` for these keys. Most reads look up one to a few keys of a copy, so the SQL of a copy
   * and a count of keys is compiled once (a by-id read then costs the engine's statement, not Kysely's compiling).
   */
  private byKeysStatement(view: ReadView, keys: readonly string[], withCopies: boolean): CompiledQuery {
    const name = `${copyKey(view.tenant, view.collection)}\u0000${view.variant}\u0000${keys.length}\u0000${withCopies}`;
    const known = keys.length <= KEPT_KEY_COUNTS ? this.compiled.get(name) : undefined;
    if (known) return CompiledQuery.raw(known.sql, [...known.parameters.slice(0, -keys.length), ...keys]);
    const { table, scope } = source(view);
    const q = sql`select ${sql.ref(`${ROW}.id`)} as id, ${sql.ref(`${ROW}.doc`)} as doc${this.folded(view, withCopies)} from ${table} where ${scope} and ${sql.ref(`${ROW}.id`)} in (${sql.join(keys)})`;
    const compiled = q.compile(this.db);
    if (keys.length <= KEPT_KEY_COUNTS) this.compiled.set(name, compiled);
    return compiled;
  }

  pointingAt(
    tenant: string,
    from: CollectionSlug,
    field: string,
    targets: readonly string[],
    limit: number | null,
  ): Promise<ReadonlyMap<string, readonly string[]>> {
    return this.pointing.lookup(tenant, from, field, targets, limit);
  }

  /** `load()`'s answer, kept under `key` while `mark` is the same (a failure is not kept). */
  private keep<T>(key: string, mark: string, load: () => Promise<T>): Promise<T> {
    const held = this.kept.get(key);
    if (held?.mark === mark) return held.value as Promise<T>;
    const value = load();
    this.kept.set(key, { mark, value });
    value.catch(() => {
      if (this.kept.get(key)?.value === value) this.kept.delete(key);
    });
    return value;
  }

  fieldNames(view: ReadView): Promise<ReadonlySet<string>> {
    const copies = this.lastCopies.get(copyKey(view.tenant, view.collection));
    const mark = this.conn.changeMark
      ? String(this.conn.changeMark())
      : `${copies?.variants.get(view.variant) ?? ''}|${copies?.probedAt ?? ''}`;
    return this.keep(`fields\u0000${copyKey(view.tenant, view.collection)}\u0000${view.variant}`, mark, async () => {
      const { table, scope } = source(view);
      const sample = sql`select ${sql.ref(`${ROW}.doc`)} as doc from ${table} where ${scope} limit ${SAMPLE}`;
      return new Set((await this.run<{ k: string }>(this.conn.json.keysOf(sample))).map((x) => x.k));
    });
  }

  async copies(tenant: string, collection: CollectionSlug, mark?: string | null): Promise<CollectionCopies> {
    const key = copyKey(tenant, collection);
    // One statement (one round trip to a server).
    const read = async (): Promise<CollectionCopies> =>
      copiesOf(
        (await this.run<{ k: string; at: string | null }>(copyPairs(tenant, collection))).map((x) => [x.k, x.at]),
      );
    const copies = await (this.conn.changeMark
      ? this.keep(`copies\u0000${key}`, mark ?? String(this.conn.changeMark()), read)
      : read());
    this.lastCopies.set(key, copies);
    return copies;
  }

  async copiesOfMany(
    tenant: string,
    collections: readonly CollectionSlug[],
  ): Promise<ReadonlyMap<CollectionSlug, CollectionCopies>> {
    const wanted = [...new Set(collections)];
    if (this.conn.changeMark || wanted.length < 2) {
      const each = await Promise.all(wanted.map((c) => this.copies(tenant, c)));
      return new Map(wanted.map((c, i) => [c, each[i] as CollectionCopies]));
    }
    const rows = await this.run<{ c: CollectionSlug; k: string; at: string | null }>(
      sql`select collection as c, variant as k, last_success_at as at from sync_state where tenant = ${tenant} and collection in (${sql.join(wanted)})
        union all select collection as c, '' as k, last_fresh_at as at from watch_state where tenant = ${tenant} and collection in (${sql.join(wanted)})`,
    );
    const out = new Map<CollectionSlug, CollectionCopies>();
    for (const c of wanted) {
      const copies = copiesOf(rows.filter((x) => x.c === c).map((x) => [x.k, x.at]));
      this.lastCopies.set(copyKey(tenant, c), copies);
      out.set(c, copies);
    }
    return out;
  }

  seenCopies(tenant: string, collection: CollectionSlug): CollectionCopies | null {
    return this.conn.changeMark ? null : (this.lastCopies.get(copyKey(tenant, collection)) ?? null);
  }

  changeMark(): string | null {
    return this.conn.changeMark ? String(this.conn.changeMark()) : null;
  }

  close(): Promise<void> {
    return this.conn.close();
  }
}

export interface MirrorReadsOptions {
  /** How long one statement may run (ms). */
  readonly timeoutMs: number;
  /** Connections of a server's pool (PostgreSQL); SQLite reads on one. */
  readonly connections?: number;
}

/** Opens the mirror `database` names read-only for the upstream's reads (`US_CONFIG` when it cannot be opened). */
export async function openMirrorReads(database: string | Dialect, opts: MirrorReadsOptions): Promise<MirrorReads> {
  return new SqlMirrorReads(await asDialect(database).openReads(opts));
}
