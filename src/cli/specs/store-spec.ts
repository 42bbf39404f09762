import { defineCommand, shared } from '../parse-flags.js';

export const STORE_SPEC = defineCommand({
  name: 'store',
  summary: 'store copy: copy a mirror between SQLite and PostgreSQL',
  usage: 'copy --to DB [--from DB | --config FILE] [--json] [options]',
  about:
    'store copy: copies a mirror between engines, SQLite ⇄ PostgreSQL (or to another file or database): every ' +
    'record row, variant, sync state, run log and write log row, documents exactly as stored. The target is ' +
    'migrated first; rows already there are kept (ON CONFLICT DO NOTHING), so an interrupted copy is resumed by ' +
    'running it again. Ends by counting every table on both sides: exit 0 when they match, 1 when they do not ' +
    '(writers still at work on the source, or rows refused by the target). Leases are not copied. The source is ' +
    'opened read-only; stop the workers on it first for an exact copy.',
  subcommands: {
    copy: { usage: 'copy', help: "copies the mirror --from (else the config's) --to another", operands: 'none' },
  },
  flags: {
    from: {
      conflicts: ['config'],
      type: 'string',
      value: 'DB',
      help: "the mirror to copy: a SQLite file or a postgres:// URL (default: the config's database, else $UNDERSTUDY_DB)",
    },
    to: {
      type: 'string',
      value: 'DB',
      required: true,
      help: 'where to copy it: a SQLite file or a postgres:// URL (migrated first)',
    },
    config: shared('config', { help: 'read --from from this config (its database)' }),
    json: shared('json', {
      help: 'print {"from","to","match","tables":[{"table","source","target","copied"}]} as JSON',
    }),
  },
  footer: 'Example:\n  understudy store copy --from ./data/understudy.db --to postgres://user@db:5432/understudy\n',
});
