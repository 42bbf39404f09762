import { databasePath } from '../config/database-path.js';
import { loadConfigFile } from '../config/load-config.js';
import { SEARCHED_COLLECTIONS, searchMirror } from '../store/search-mirror.js';
import { collectionFlags } from './collection-flag.js';
import { printHelp } from './command-help.js';
import { formatGrid } from './format-table.js';
import { parseFlags } from './parse-flags.js';
import { SEARCH_SPEC } from './specs/search-spec.js';

/** `understudy search WORDS`: ranked matches from the mirror's full-text index; exit 0 (also with no match). */
export async function searchCommand(argv: string[]): Promise<number> {
  const { values, positionals, help } = parseFlags(argv, SEARCH_SPEC);
  if (help) return printHelp(SEARCH_SPEC, help);
  const [collection] = collectionFlags(
    values.collection ? [values.collection] : [],
    SEARCHED_COLLECTIONS,
    'not searched',
  );
  const config = values.config ? loadConfigFile(values.config) : null;
  const hits = await searchMirror(databasePath(config, process.env, values.db), {
    text: positionals.join(' '),
    limit: values.limit,
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
