import { defineCommand, shared } from '../parse-flags.js';

export const CHECK_SPEC = defineCommand({
  name: 'check',
  summary: "compare the mirror's counts with the upstream's (--repair: full passes where they drift)",
  usage: '--config FILE [--tenant SLUG]... [--json] [--counts] [--repair] [options]',
  about:
    "Compares, per tenant, collection and mirrored variant, the mirror with the upstream, inside the key's read " +
    "budget. Counts first: the upstream's totalDocs (one limit=1 read) against the mirror's live rows, as drift " +
    '(upstream - local). Then ids and versions: the upstream paged in (updatedAt, id) order asking only for id and ' +
    "updatedAt at the largest page size, each page's range against the mirror's live rows in it, reporting missing " +
    '(upstream has it, the mirror has no live row), extra (a live row the upstream does not list; those that exist ' +
    'upstream as drafts are named unpublished, one draft=true read per 100) and stale (both have it, updatedAt ' +
    'differs). Cost: 1 + ceil(n / page size) requests per collection and variant of n records ' +
    '(the page size the upstream applies, at most 1000; one more when the last page is exactly full or some records ' +
    'have no updatedAt); --counts keeps the cheap count-only check (1 request each). Exit 0 when all agree, 1 ' +
    'otherwise. Collections without a list route, and those a sync holds right now, are not compared (said on ' +
    'stderr). The result is kept in the mirror: `status` shows the last check.',
  flags: {
    config: shared('config', {
      required: true,
      help: 'JSON config (tenants, keys by apiKeyEnv, database, redis)',
    }),
    tenant: {
      type: 'string',
      multiple: true,
      value: 'SLUG',
      help: 'check this tenant (repeatable; default: every tenant of the config)',
    },
    json: shared('json', {
      help: '{"tenants":[{"slug","requests","collections":[{"collection","variant","local","upstream","drift","missing","extra","stale","unpublished","missingIds","extraIds","staleIds","unpublishedIds"}]}]} (unpublished: of extra, records that exist upstream as drafts only; the *Ids: the first 20 in id order; with --counts only the counts) (with --repair also "repair": what was synced or queued, and "after": the check again)',
    }),
    counts: {
      type: 'boolean',
      help: 'compare counts only: one limit=1 read per collection and variant, no ids (a record missing and another extra cancel out)',
    },
    repair: {
      type: 'boolean',
      help: 'tombstone the rows found newer than the upstream, then run a full pass (missing records written, stale ones updated, extra rows tombstoned: as unpublished when they exist upstream as drafts, else as deleted) of each drifting collection: queued for the workers when Redis is configured and a worker listens (exit 0 once queued), else here and now (exit 0 when a check afterwards finds no drift left)',
    },
    db: shared('db', {
      value: 'FILE',
      help: "the mirror (default: the config's database, else UNDERSTUDY_DB, else ./data/understudy.db)",
    }),
    'local-budget': {
      type: 'boolean',
      help: "pace each key with this process's own gate even when Redis is configured (default: the workers' shared budget)",
    },
  },
});
