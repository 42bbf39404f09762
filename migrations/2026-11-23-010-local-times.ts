import type { Kysely } from 'kysely';
import { inTransaction } from './lib/engine.js';

// Frozen copy, as of this migration, of the `local` typed columns (src/store/columns.ts may move on; this must not).
const TABLES = ['seasons', 'series', 'events', 'event_instances'] as const;
const LOCAL: readonly (readonly [column: string, instant: string, zones: readonly string[]])[] = [
  ['start_local', 'startDate', ['startDate_tz']],
  ['end_local', 'endDate', ['endDate_tz', 'startDate_tz']],
];
const CHUNK = 1000;

const formats = new Map<string, Intl.DateTimeFormat | null>();
const two = (n: number) => String(n).padStart(2, '0');

/** Frozen copy of src/store/local-time.ts: `iso` as wall time in `zone` with its offset, to the second. */
function localWallTime(iso: unknown, zone: unknown): string | null {
  if (typeof iso !== 'string' || typeof zone !== 'string' || zone === '') return null;
  let fmt = formats.get(zone);
  if (fmt === undefined) {
    try {
      fmt = new Intl.DateTimeFormat('en-US', {
        timeZone: zone,
        hourCycle: 'h23',
        ...{ year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' },
      });
    } catch {
      fmt = null;
    }
    formats.set(zone, fmt);
  }
  const ms = Date.parse(iso);
  if (fmt === null || Number.isNaN(ms)) return null;
  const at = Math.floor(ms / 1000) * 1000;
  const p: Record<string, number> = {};
  for (const x of fmt.formatToParts(at)) if (x.type !== 'literal') p[x.type] = Number(x.value);
  const [y, mo, d, h, mi, s] = [p.year ?? 0, p.month ?? 1, p.day ?? 1, p.hour ?? 0, p.minute ?? 0, p.second ?? 0];
  const off = Math.round((Date.UTC(y, mo - 1, d, h, mi, s) - at) / 60_000);
  const a = Math.abs(off);
  const sign = off < 0 ? '-' : '+';
  return `${String(y).padStart(4, '0')}-${two(mo)}-${two(d)}T${two(h)}:${two(mi)}:${two(s)}${sign}${two(Math.floor(a / 60))}:${two(a % 60)}`;
}

/**
 * `start_local` / `end_local` on seasons, series, events and event instances: the local wall-clock time with its
 * offset, written by the store from each record's `_tz` zone. Rows already mirrored are filled in here, so no
 * column is NULL only because the mirror is older than it.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations take Kysely<any> so they stay frozen in time
export async function up(db: Kysely<any>): Promise<void> {
  await inTransaction(db, async (trx) => {
    for (const table of TABLES) {
      for (const [column] of LOCAL) await trx.schema.alterTable(table).addColumn(column, 'text').execute();
      let after: { tenant: string; id: string } | null = null;
      for (;;) {
        let q = trx.selectFrom(table).select(['tenant', 'id', 'doc']);
        if (after) {
          const { tenant, id } = after;
          q = q.where((eb) =>
            eb.or([eb('tenant', '>', tenant), eb.and([eb('tenant', '=', tenant), eb('id', '>', id)])]),
          );
        }
        const rows: { tenant: string; id: string; doc: unknown }[] = await q
          .orderBy('tenant')
          .orderBy('id')
          .limit(CHUNK)
          .execute();
        for (const r of rows) {
          // doc is JSON text on SQLite and jsonb (already parsed by the driver) on PostgreSQL.
          const doc = (typeof r.doc === 'string' ? JSON.parse(r.doc) : r.doc) as Record<string, unknown>;
          const set: Record<string, string | null> = {};
          for (const [column, instant, zones] of LOCAL) {
            const zone = zones.map((z) => doc[z]).find((z) => typeof z === 'string' && z !== '');
            set[column] = localWallTime(doc[instant], zone);
          }
          if (Object.values(set).every((v) => v === null)) continue;
          await trx.updateTable(table).set(set).where('tenant', '=', r.tenant).where('id', '=', r.id).execute();
        }
        if (rows.length < CHUNK) break;
        after = rows[rows.length - 1]!;
      }
    }
  });
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of TABLES)
    for (const [column] of LOCAL) await db.schema.alterTable(table).dropColumn(column).execute();
}
