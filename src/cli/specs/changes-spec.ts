import { CHANGE_KINDS, DELETE_REASONS } from '../../sync/store-port.js';
import { defineCommand, shared } from '../parse-flags.js';

export const CHANGES_SPEC = defineCommand({
  name: 'changes',
  summary: "print the mirror's change log (--follow: as changes commit)",
  usage:
    '[--config FILE | --db FILE] [--since SEQ] [--tenant SLUG]... [--collection NAME]... [--kind KIND]... [--reason REASON]... [--limit N] [--json | --nl] [--follow]',
  about:
    "Prints the mirror's change log (the `changes` table, docs/schema.md) in seq order: every insert, update, " +
    'delete and revive that sync or a write-through applied; a delete says why (deleted, or unpublished: a draft ' +
    'only upstream). Text: one change a line (seq, time, kind, tenant/collection/id, changed fields, or a ' +
    "delete's reason in parentheses). The mirror is opened read-only and never created.",
  flags: {
    config: shared('config', { help: 'JSON config: its database (changes.retainDays is checked with the rest)' }),
    db: shared('db'),
    since: {
      type: 'int',
      min: 0,
      default: 0,
      value: 'SEQ',
      help: 'only changes after SEQ, the last seq already seen (0: from the oldest kept)',
    },
    tenant: { type: 'string', multiple: true, value: 'SLUG', help: "only this tenant's changes (repeatable)" },
    collection: {
      type: 'string',
      multiple: true,
      value: 'NAME',
      help: "only this collection's: its API path (event-instances) or its table (event_instances); repeatable",
    },
    kind: {
      type: 'choice',
      values: CHANGE_KINDS,
      multiple: true,
      value: 'KIND',
      help: 'only insert, update, delete or revive (repeatable)',
    },
    reason: {
      type: 'choice',
      values: DELETE_REASONS,
      multiple: true,
      value: 'REASON',
      help: 'only deletes with this reason: deleted (gone upstream) or unpublished (a draft only upstream); repeatable; with --kind, narrows only the deletes (--kind must include delete)',
    },
    limit: { type: 'int', min: 1, value: 'N', help: 'at most N changes (default: all)' },
    json: shared('json', {
      help: 'a JSON array of change rows (with --follow: one JSON object a line)',
      conflicts: ['nl'],
    }),
    nl: { type: 'boolean', help: 'one JSON object a line (newline-delimited JSON)' },
    follow: {
      type: 'boolean',
      help: 'keep running, printing changes as they commit, until SIGINT or SIGTERM (or --limit)',
    },
  },
});
