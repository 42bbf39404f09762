import { type Kysely, sql } from 'kysely';
import { UnderstudyError } from '../../errors.js';
import { PUBLISHED, type Variant } from '../../sync/store-port.js';
import type { CollectionSlug } from '../../vocabulary/collections.js';
import { TYPED_COLUMNS } from '../columns.js';
import { collectionTable } from '../db-schema.js';
import { asDialect, type Dialect } from '../dialect.js';
import { compileFilter } from './compile-filter.js';
import { compileOrder } from './compile-order.js';
import type { Sql } from './json-sql.js';
import type { DocRow, ListResult, ListSpec, ReadView } from './read-spec.js';
import type { ReadsConnection } from './reads-connection.js';

/** What the mirror holds of one tenant's collection: each copy's last success, and the last good watch probe. */
export interface CollectionCopies {
  /** Each variant with a sync state, and when its last pass succeeded (null: never). */
  readonly variants: ReadonlyMap<Variant, string | null>;
  /** When a watch probe of the collection last succeeded; null when none did. */
  readonly probedAt: string | null;
  /** When watch last saw a change (part of what the field names depend on); null when never. */
  readonly changedAt: string | null;
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
const ROW = 'r';
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

function readsOver(conn: ReadsConnection): MirrorReads {
  const db = conn.db as unknown as Loose;
  const guard = conn.guard ? sql` and ${conn.guard}` : sql``;
  const run = async <R>(q: Sql): Promise<R[]> => {
    try {
      return (await q.execute(db)).rows as R[];
    } catch (err) {
      const e = conn.failure(err);
      if (e instanceof UnderstudyError) throw e;
      throw new UnderstudyError('US_STORE', `store: a read failed: ${(err as Error).message}`, { cause: err });
    }
  };

  async function list(spec: ListSpec): Promise<ListResult> {
    const { table, scope } = source(spec.view);
    const where = spec.filter ? sql` and ${compileFilter(spec.filter, spec.view, ROW, conn.json)}` : sql``;
    const total = spec.count ? sql`, count(*) over () as total` : sql``;
    const order = compileOrder(spec.sort, spec.view, ROW, conn.json);
    const q = sql`select ${sql.ref(`${ROW}.id`)} as id, ${sql.ref(`${ROW}.doc`)} as doc${total} from ${table} where ${scope}${guard}${where} order by ${order} limit ${spec.limit ?? ALL_ROWS} offset ${spec.offset}`;
    const rows = await run<{ id: unknown; doc: string; total?: number | string }>(q);
    const first = rows[0];
    return {
      rows: rows.map((x): DocRow => ({ id: String(x.id), doc: x.doc })),
      total: spec.count && first ? Number(first.total) : null,
    };
  }

  async function byKeys(view: ReadView, ids: readonly string[]): Promise<ReadonlyMap<string, string>> {
    const out = new Map<string, string>();
    if (ids.length === 0) return out;
    const { table, scope } = source(view);
    for (let i = 0; i < ids.length; i += 500) {
      const chunk = ids.slice(i, i + 500);
      const q = sql`select ${sql.ref(`${ROW}.id`)} as id, ${sql.ref(`${ROW}.doc`)} as doc from ${table} where ${scope} and ${sql.ref(`${ROW}.id`)} in (${sql.join(chunk)})`;
      for (const x of await run<{ id: unknown; doc: string }>(q)) out.set(String(x.id), x.doc);
    }
    return out;
  }

  async function pointingAt(
    tenant: string,
    from: CollectionSlug,
    field: string,
    targets: readonly string[],
    limit: number | null,
  ): Promise<ReadonlyMap<string, readonly string[]>> {
    const out = new Map<string, string[]>();
    if (targets.length === 0) return out;
    const view: ReadView = { tenant, collection: from, variant: PUBLISHED, locale: null, computed: new Set() };
    const { table, scope } = source(view);
    const typed = TYPED_COLUMNS[from].find((t) => t.path === field && t.kind === 'ref');
    const list = sql.join(targets);
    const pointing = typed
      ? { from: table, target: sql.ref(`${ROW}.${typed.column}`) }
      : { from: sql`${table}, ${conn.json.items(ROW, field)}`, target: conn.json.itemText };
    const id = conn.json.collated(sql.ref(`${ROW}.id`));
    const ordered = sql`row_number() over (partition by ${pointing.target} order by ${sql.ref(`${ROW}.created_at`)} desc nulls first, ${id} asc)`;
    const inner = sql`select ${pointing.target} as target, ${sql.ref(`${ROW}.id`)} as id, ${ordered} as n from ${pointing.from} where ${scope}${guard} and ${pointing.target} in (${list})`;
    const cap = limit === null ? sql`` : sql` where x.n <= ${limit}`;
    const rows = await run<{ target: string; id: unknown }>(
      sql`select x.target, x.id from (${inner}) as x${cap} order by x.target, x.n`,
    );
    for (const x of rows) {
      const l = out.get(x.target);
      if (l) l.push(String(x.id));
      else out.set(x.target, [String(x.id)]);
    }
    return out;
  }

  async function fieldNames(view: ReadView): Promise<ReadonlySet<string>> {
    const { table, scope } = source(view);
    const sample = sql`select ${sql.ref(`${ROW}.doc`)} as doc from ${table} where ${scope} limit ${SAMPLE}`;
    return new Set((await run<{ k: string }>(conn.json.keysOf(sample))).map((x) => x.k));
  }

  async function copies(tenant: string, collection: CollectionSlug): Promise<CollectionCopies> {
    const states = await run<{ variant: string; last_success_at: string | null }>(
      sql`select variant, last_success_at from sync_state where tenant = ${tenant} and collection = ${collection}`,
    );
    const [w] = await run<{ last_fresh_at: string | null; last_change_at: string | null }>(
      sql`select last_fresh_at, last_change_at from watch_state where tenant = ${tenant} and collection = ${collection}`,
    );
    return {
      variants: new Map(states.map((s) => [s.variant, s.last_success_at])),
      probedAt: w?.last_fresh_at ?? null,
      changedAt: w?.last_change_at ?? null,
    };
  }

  return { list, byKeys, pointingAt, fieldNames, copies, close: () => conn.close() };
}

export interface MirrorReadsOptions {
  /** How long one statement may run (ms). */
  readonly timeoutMs: number;
  /** Connections of a server's pool (PostgreSQL); SQLite reads on one. */
  readonly connections?: number;
}

/** Opens the mirror `database` names read-only for the upstream's reads (`US_CONFIG` when it cannot be opened). */
export async function openMirrorReads(database: string | Dialect, opts: MirrorReadsOptions): Promise<MirrorReads> {
  return readsOver(await asDialect(database).openReads(opts));
}
