import pg from 'pg';

/**
 * How values come back from PostgreSQL: as SQLite gives them, so that no code above the store (and no output of
 * `understudy sql`) knows which engine runs. `bigint` (counts, sums) as a number when exact, else its digits;
 * `json`/`jsonb` as text exactly as stored (the store parses it losslessly; `JSON.parse` would round large
 * integers); `numeric` as its digits. Timestamps are not a trap here: the mirror keeps instants as UTC ISO text.
 */
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    switch (oid) {
      case pg.types.builtins.INT8:
        return (v: string) => (Number.isSafeInteger(Number(v)) ? Number(v) : v);
      case pg.types.builtins.JSON:
      case pg.types.builtins.JSONB:
      case pg.types.builtins.NUMERIC:
        return (v: string) => v;
      default:
        return pg.types.getTypeParser(oid, format ?? 'text');
    }
  },
};

/** The `pg` pool settings every mirror connection uses. */
export function poolConfig(url: string, max: number): pg.PoolConfig {
  return {
    connectionString: url,
    max,
    types: types as pg.CustomTypesConfig,
    // A connection left idle is closed, so a stopped process leaves none open on the server.
    idleTimeoutMillis: 10_000,
    connectionTimeoutMillis: 10_000,
    application_name: 'understudy',
  };
}
