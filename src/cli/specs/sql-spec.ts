import { defineCommand, shared } from '../parse-flags.js';

export const SQL_SPEC = defineCommand({
  name: 'sql',
  summary: 'run read-only SQL over the mirror',
  usage:
    '[--config FILE | --db FILE|URL] [--json|--csv|--nl|--raw] [-p NAME VALUE]... [--timeout S] ["SELECT …" | -]\n' +
    '       understudy sql [--config FILE | --db FILE|URL] [--json|--csv|--nl] --tables | --schema [TABLE]',
  about:
    'Runs one read-only SQL statement over the mirror and prints its rows as they are read (memory stays flat ' +
    'however many rows). The SQL comes from the argument, or from standard input when the argument is "-" or ' +
    'absent (piped). The database is opened read-only; statements that write (INSERT, UPDATE, DELETE, DROP, ATTACH, ' +
    'writing PRAGMAs, VACUUM …) are refused. ".tables" (the names only) and ".schema [TABLE]" as the statement ' +
    'work as in sqlite3. A reader that stops reading (| head) ends it quietly.',
  operands: true,
  flags: {
    config: shared('config', {
      help: "read the database path from this config (a relative one from the config file's folder)",
    }),
    db: shared('db', {
      conflicts: ['config'],
      help: "the mirror: a SQLite file or a postgres:// URL (default: the config's database, else $UNDERSTUDY_DB, else ./data/understudy.db); on PostgreSQL the statement runs in a READ ONLY transaction",
    }),
    tables: {
      type: 'boolean',
      help: 'list the tables and views with their row counts (and live rows) and what each holds',
    },
    schema: {
      type: 'boolean',
      conflicts: ['tables'],
      help: 'the columns of TABLE, given as the argument (or of every table and view): type, NOT NULL, what each means',
    },
    json: shared('json', {
      help: 'print a JSON array of row objects (JSON values as JSON, integers exact)',
      conflicts: ['csv', 'nl', 'raw'],
    }),
    csv: { type: 'boolean', conflicts: ['nl', 'raw'], help: 'print CSV (RFC 4180) with a header row' },
    nl: { type: 'boolean', conflicts: ['raw'], help: 'print one JSON object per line (NDJSON)' },
    raw: { type: 'boolean', help: 'print the one value of a one-column, one-row result as is, then a newline' },
    // Taken out of argv by takeParams before parsing (it has two values); declared for its line of help.
    param: {
      type: 'string',
      short: 'p',
      value: 'NAME',
      help: 'followed by VALUE: bind the named parameter :NAME (or @NAME, $NAME) to the string VALUE (repeatable)',
    },
    'max-width': {
      type: 'int',
      min: 2,
      default: 60,
      value: 'N',
      help: 'truncate table cells to N characters (never in --json/--csv/--nl); column widths come from the first 1000 rows',
    },
    timeout: {
      // setTimeout fires at once past 2^31 - 1 ms (about 24.8 days): refused rather than stop every statement.
      type: 'number',
      min: 0,
      above: true,
      max: 2147483,
      unit: 'seconds',
      value: 'S',
      help: 'stop the statement after S seconds (default: none): exit 1 with a one-line reason',
    },
  },
});
