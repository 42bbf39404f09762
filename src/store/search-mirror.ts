import { dialectFor } from './dialect.js';
import type { SearchHit, SearchQuery } from './search-query.js';

export { SEARCHED_COLLECTIONS, type SearchHit, type SearchQuery } from './search-query.js';

/**
 * Runs `q` over the mirror `database` (a SQLite file opened read-only, or a PostgreSQL URL); best first, by tier,
 * alike on both engines, the tier being the integer part of `rank`:
 * - 3: a production (series, event) whose title begins with the words, in order: the whole title or its start;
 * - 2: a production whose title holds them as a phrase further on (`cherry orchard`: "The Cherry Orchard");
 * - 1: any other record whose title (name, alt text) holds every word;
 * - 0: the rest, found by its description, caption or venue name.
 * Within tiers 3 to 1, the closer the title is to the words the better (the fraction: the share of the title they
 * make up, so an exact title comes first); within tier 0, text relevance (bm25 on SQLite, ts_rank_cd on
 * PostgreSQL; on SQLite among the newest 10,000 matches only, when there are more: `TIER_0_BOUND`). Case and
 * accents aside, as the index reads words; a prefix word (`nutcr*`) counts in every tier.
 */
export const searchMirror = (database: string, q: SearchQuery): Promise<SearchHit[]> => dialectFor(database).search(q);
