import { StuckPageError } from '../errors.js';
import type { UpstreamDoc } from '../vocabulary/ids.js';
import type { Position } from './store-port.js';

/**
 * Whether a page's last position is past the one it was asked to start after. Among equal instants only the very
 * same id counts as not moving: upstreams order ids as strings or as numbers, so a smaller id is no proof.
 */
const movedOn = (last: Position, after: Position): boolean => {
  const t = Date.parse(last.updatedAt) - Date.parse(after.updatedAt);
  return t > 0 || (t === 0 && last.id !== after.id);
};

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

  /**
   * Throws `StuckPageError` (US_UPSTREAM_STUCK) when this page, asked for after `after`, did not move on: the
   * same records as the previous page, or a last position at or (by instant) before `after`.
   */
  check(docs: readonly UpstreamDoc[], after: Position | null, last: Position | null): void {
    if (docs.length === 0) return;
    const print = docs.map((d) => String(d[this.keyField])).join('\u0000');
    if (print === this.previous) {
      throw new StuckPageError('GET', this.route, 'the upstream answered the same page again; it ignores where/page');
    }
    if (after && last && !movedOn(last, after)) {
      throw new StuckPageError(
        'GET',
        this.route,
        `the page did not advance past updatedAt ${after.updatedAt}; the upstream ignores where`,
      );
    }
    this.previous = print;
  }
}
