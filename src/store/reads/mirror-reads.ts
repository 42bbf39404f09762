import { type Kysely, sql } from 'kysely';
import { isUnderstudyError, UnderstudyError } from '../../errors.js';
import { PUBLISHED, type Variant } from '../../sync/store-port.js';
import type { CollectionSlug } from '../../vocabulary/collections.js';
import { collectionTable } from '../db-schema.js';
import { asDialect, type Dialect } from '../dialect.js';
import { compileFilter } from './compile-filter.js';
import { compileOrder } from './compile-order.js';
import type { Sql } from './json-sql.js';
import { PointingAt, ROW } from './pointing-at.js';
import type { DocRow, ListResult, ListSpec, ReadView } from './read-spec.js';
import type { ReadsConnection } from './reads-connection.js';

/** What the mirror holds of one tenant's collection: each copy's last success, and the last good watch probe. */
export interface CollectionCopies {
  /** Each variant with a sync state, and when its last pass succeeded (null: never). */
  readonly variants: ReadonlyMap<Variant, string | null>;
  /** When a watch probe of the collection last succeeded; null when none did. */
  readonly probedAt: string | null;
}

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
  /** The top-level field names the stored records of `view` have (from a sample of them). */
  fieldNames(view: ReadView): Promise<ReadonlySet<string>>;
  /** The copies of a collection the mirror holds, from its sync and watch state. */
  copies(tenant: string, collection: CollectionSlug): Promise<CollectionCopies>;
  close(): Promise<void>;
}

type Loose = Kysely<Record<string, Record<string, unknown>>>;
const ALL_ROWS = 9_007_199_254_740_991;
const SAMPLE = 200;

/** The table of a view and the conditions that scope it to the view's live rows. */
function source(view: ReadView): { table: Sql; scope: Sql } {
  const r = (c: string) => sql.ref(`${ROW}.${c}`);
  if (view.variant === PUBLISHED)
    return {
      table: sql`${sql.table(collectionTable(view.collection))} as ${sql.ref(ROW)}`,
      scope: sql`${r('tenant')} = ${view.tenant} and ${r('deleted_at')} is null`,
    };
  return {
    table: sql`${sql.table('doc_variants')} as ${sql.ref(ROW)}`,
    scope: sql`${r('collection')} = ${view.collection} and ${r('tenant')} = ${view.tenant} and ${r('variant')} = ${view.variant} and ${r('deleted_at')} is null`,
  };
}

/** `MirrorReads` over a reads connection of either engine. */
class SqlMirrorReads implements MirrorReads {
  private readonly db: Loose;
  private readonly guard: Sql;
  private readonly pointing: PointingAt;

  constructor(private readonly conn: ReadsConnection) {
    this.db = conn.db as unknown as Loose;
    this.guard = conn.guard ? sql` and ${conn.guard}` : sql``;
    this.pointing = new PointingAt(conn, (q) => this.run(q));
  }

  private async run<R>(q: Sql): Promise<R[]> {
    try {
      return (await q.execute(this.db)).rows as R[];
    } catch (err) {
      const e = this.conn.failure(err);
      if (isUnderstudyError(e)) throw e;
      throw new UnderstudyError('US_STORE', `store: a read failed: ${(err as Error).message}`, { cause: err });
    }
  }

  async list(spec: ListSpec): Promise<ListResult> {
    const { table, scope } = source(spec.view);
    const where = spec.filter ? sql` and ${compileFilter(spec.filter, spec.view, ROW, this.conn.json)}` : sql``;
    const total = spec.count ? sql`, count(*) over () as total` : sql``;
    const order = compileOrder(spec.sort, spec.view, ROW, this.conn.json);
    const q = sql`select ${sql.ref(`${ROW}.id`)} as id, ${sql.ref(`${ROW}.doc`)} as doc${total} from ${table} where ${scope}${this.guard}${where} order by ${order} limit ${spec.limit ?? ALL_ROWS} offset ${spec.offset}`;
    const rows = await this.run<{ id: unknown; doc: string; total?: number | string }>(q);
    const first = rows[0];
    return {
      rows: rows.map((x): DocRow => ({ id: String(x.id), doc: x.doc })),
      total: spec.count && first ? Number(first.total) : null,
    };
  }

  async byKeys(view: ReadView, ids: readonly string[]): Promise<ReadonlyMap<string, string>> {
    const out = new Map<string, string>();
    const { table, scope } = source(view);
    for (let i = 0; i < ids.length; i += 500) {
      const chunk = ids.slice(i, i + 500);
      const q = sql`select ${sql.ref(`${ROW}.id`)} as id, ${sql.ref(`${ROW}.doc`)} as doc from ${table} where ${scope} and ${sql.ref(`${ROW}.id`)} in (${sql.join(chunk)})`;
      for (const x of await this.run<{ id: unknown; doc: string }>(q)) out.set(String(x.id), x.doc);
    }
    return out;
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

  async fieldNames(view: ReadView): Promise<ReadonlySet<string>> {
    const { table, scope } = source(view);
    const sample = sql`select ${sql.ref(`${ROW}.doc`)} as doc from ${table} where ${scope} limit ${SAMPLE}`;
    return new Set((await this.run<{ k: string }>(this.conn.json.keysOf(sample))).map((x) => x.k));
  }

  async copies(tenant: string, collection: CollectionSlug): Promise<CollectionCopies> {
    // One statement (one round trip to a server): each variant's last success, then watch's row as variant ''.
    const rows = await this.run<{ variant: string; at: string | null }>(
      sql`select variant, last_success_at as at from sync_state where tenant = ${tenant} and collection = ${collection}
        union all select '' as variant, last_fresh_at as at from watch_state where tenant = ${tenant} and collection = ${collection}`,
    );
    const watch = rows.find((x) => x.variant === '');
    return {
      variants: new Map(rows.filter((x) => x.variant !== '').map((x) => [x.variant, x.at])),
      probedAt: watch?.at ?? null,
    };
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
