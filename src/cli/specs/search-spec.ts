import { defineCommand, shared } from '../parse-flags.js';

export const SEARCH_SPEC = defineCommand({
  name: 'search',
  summary: 'full-text search over titles, names and descriptions',
  usage: '[--config FILE | --db FILE|URL] [--tenant SLUG] [--collection NAME] [--limit N] [--json] WORDS...',
  about:
    "Full-text search over the mirror's titles, names, descriptions and venue names, best match first, in tiers: a " +
    'series or event whose title is or begins with the words, then one whose title holds them as a phrase, then ' +
    'any other title holding every word, then descriptions, captions and venue names. Within a tier the closest ' +
    "title comes first (descriptions: bm25 on SQLite, ts_rank_cd on PostgreSQL); rank's integer part is the tier, " +
    '3 to 0. Every word must match, case and accents aside; end a word with * to match it as a prefix ("nutcr*"). ' +
    'Quotes, OR and a leading - are words, never query syntax (a first word starting with -: after --, as in ' +
    '`search -- -lake`). The mirror is opened read-only.',
  operands: true,
  words: true,
  flags: {
    config: shared('config', {
      help: "read the mirror from this config (its database; a relative one from the config file's folder)",
    }),
    db: shared('db', { conflicts: ['config'] }),
    tenant: { type: 'string', value: 'SLUG', help: "only this tenant's records" },
    collection: {
      type: 'string',
      value: 'NAME',
      help: 'only this collection: one whose records have a title or a name (series, events, …; a wrong one is named with the list)',
    },
    limit: { type: 'int', min: 1, max: 1000, default: 20, value: 'N', help: 'at most N results (1000 at most)' },
    json: shared('json', {
      help: 'print a JSON array of {collection, tenant, id, title, snippet, rank} (rank: tier 3 to 0 plus a fraction)',
    }),
  },
});
