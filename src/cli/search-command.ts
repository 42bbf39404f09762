import { databasePath } from '../config/database-path.js';
import { loadConfigFile } from '../config/load-config.js';
import { UsageError } from '../errors.js';
import { SEARCHED_COLLECTIONS, searchMirror } from '../store/search-mirror.js';
import { collectionFlags } from './collection-flag.js';
import { formatGrid } from './format-table.js';
import { COMMON_FLAGS, type CommandSpec, DB_FLAG, type Flags, helpText, parseFlags } from './parse-flags.js';

const FLAGS = {
  config: {
    type: 'string',
    value: 'FILE',
    help: "read the mirror from this config (its database; a relative one from the config file's folder)",
  },
  db: DB_FLAG,
  tenant: { type: 'string', value: 'SLUG', help: "only this tenant's records" },
  collection: { type: 'string', value: 'NAME', help: `only this collection (${SEARCHED_COLLECTIONS.join(', ')})` },
  limit: { type: 'string', value: 'N', help: 'at most N results (default 20, at most 1000)' },
  json: {
    type: 'boolean',
    help: 'print a JSON array of {collection, tenant, id, title, snippet, rank} (rank: tier 3 to 0 plus a fraction)',
  },
  ...COMMON_FLAGS,
} as const satisfies Flags;

const SPEC: CommandSpec<typeof FLAGS> = {
  name: 'search',
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
  flags: FLAGS,
};

/** `understudy search WORDS`: ranked matches from the mirror's full-text index; exit 0 (also with no match). */
export async function searchCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, SPEC);
  if (values.help) {
    process.stdout.write(helpText(SPEC));
    return 0;
  }
  if (values.db && values.config) throw new UsageError('give --db or --config, not both');
  const limit = values.limit === undefined ? 20 : Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
    throw new UsageError('--limit must be an integer from 1 to 1000');
  const [collection] = collectionFlags(
    values.collection ? [values.collection] : [],
    SEARCHED_COLLECTIONS,
    'not searched',
  );
  const config = values.config ? loadConfigFile(values.config) : null;
  const hits = await searchMirror(databasePath(config, process.env, values.db), {
    text: positionals.join(' '),
    limit,
    ...(values.tenant !== undefined ? { tenant: values.tenant } : {}),
    ...(collection !== undefined ? { collection } : {}),
  });
  if (values.json) {
    process.stdout.write(hits.length === 0 ? '[]\n' : `[\n${hits.map((h) => JSON.stringify(h)).join(',\n')}\n]\n`);
    return 0;
  }
  if (values.quiet) return 0;
  const rows = hits.map((h) => [h.rank.toFixed(2), h.collection, h.tenant, h.id, h.title, h.snippet]);
  process.stdout.write(
    `${formatGrid(['rank', 'collection', 'tenant', 'id', 'title', 'snippet'], rows, { maxWidth: 60, footer: true })}\n`,
  );
  return 0;
}
