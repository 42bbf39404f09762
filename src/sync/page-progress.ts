import { StuckPageError } from '../errors.js';
import type { UpstreamDoc } from '../partners/partners-client.js';
import type { Position } from '../store/store.js';
import { comparePositions } from './position.js';

/**
 * Watches one pass over a list route for a page that does not move it forward: the very records of the previous
 * page again, or a last position not after the one the page was asked to start after. Either means the upstream
 * (or a cache in front of it) ignores `where` or `page`, and asking again would loop for ever.
 */
export class PageProgress {
  private previous: string | null = null;

  constructor(
    private readonly route: string,
    private readonly keyField: string,
  ) {}

  /** Throws `StuckPageError` (US_UPSTREAM_STUCK) when this page, asked for after `after`, did not move on. */
  check(docs: readonly UpstreamDoc[], after: Position | null, last: Position | null): void {
    if (docs.length === 0) return;
    const print = docs.map((d) => String(d[this.keyField])).join('\u0000');
    if (print === this.previous) {
      throw new StuckPageError('GET', this.route, 'the upstream answered the same page again; it ignores where/page');
    }
    if (after && last && comparePositions(last, after) <= 0) {
      throw new StuckPageError(
        'GET',
        this.route,
        `the page did not advance past updatedAt ${after.updatedAt}; the upstream ignores where`,
      );
    }
    this.previous = print;
  }
}
