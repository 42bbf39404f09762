import { MultiBar, type SingleBar } from 'cli-progress';

/** What one tenant's line shows. */
interface Line {
  bar: SingleBar;
  tenant: string;
  collection: string;
  fetched: number;
  total: number | null;
  /** When this collection's first record came (for the rate). */
  startedAt: number;
  /** When the wait for the read budget began, while waiting. */
  waitingSince: number | null;
  done: string | null;
}

const seconds = (ms: number): string => {
  const s = Math.max(0, Math.round(ms / 1000));
  return s < 120 ? `${s} s` : `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
};

function render(l: Line, now: number): string {
  const head = `${l.tenant} ${l.collection}`;
  if (l.done !== null) return `${l.tenant}: ${l.done}`;
  const elapsed = (now - l.startedAt) / 1000;
  const rate = elapsed > 0.5 && l.fetched > 0 ? l.fetched / elapsed : null;
  const parts = [l.total !== null ? `${l.fetched}/${l.total} records` : `${l.fetched} records`];
  if (rate !== null) parts.push(`${rate < 10 ? rate.toFixed(1) : Math.round(rate)}/s`);
  if (rate !== null && l.total !== null && l.total > l.fetched)
    parts.push(`ETA ${seconds(((l.total - l.fetched) / rate) * 1000)}`);
  if (l.waitingSince !== null)
    parts.push(`waiting ${seconds(Math.max(1000, now - l.waitingSince))} for the read budget`);
  return `${head}  ${parts.join('  ')}`;
}

/**
 * The progress of a sync on a terminal (cli-progress): one line per tenant, naming the collection it is reading,
 * records done of the collection's `totalDocs`, the rate, the ETA, and how long it has waited for its key's read
 * budget. Log lines go through `log`, printed above the lines at the next redraw, never spliced into them. Only
 * ever built for a terminal: off one there is no progress at all.
 */
export class ProgressDisplay {
  readonly #bars: MultiBar;
  readonly #lines = new Map<string, Line>();
  #stopped = false;

  constructor(stream: NodeJS.WriteStream = process.stderr) {
    this.#bars = new MultiBar({
      stream,
      format: (_options, _params, payload: { line?: Line }) => (payload.line ? render(payload.line, Date.now()) : ''),
      hideCursor: true,
      clearOnComplete: true,
      linewrap: false,
      fps: 4,
      // A bar redraws only when its text changes; the clock in the text changes every second.
      forceRedraw: true,
    });
  }

  #line(tenant: string): Line {
    let l = this.#lines.get(tenant);
    if (!l) {
      const bar = this.#bars.create(0, 0);
      l = {
        bar,
        tenant,
        collection: '',
        fetched: 0,
        total: null,
        startedAt: Date.now(),
        waitingSince: null,
        done: null,
      };
      bar.update({ line: l });
      this.#lines.set(tenant, l);
    }
    return l;
  }

  /** A committed page of `collection`: records so far, and the total when the upstream said it. */
  progress(tenant: string, p: { collection: string; fetched: number; total?: number }): void {
    if (this.#stopped) return;
    const l = this.#line(tenant);
    if (l.collection !== p.collection) {
      l.collection = p.collection;
      l.startedAt = Date.now();
    }
    l.fetched = p.fetched;
    l.total = p.total ?? null;
    l.done = null;
  }

  /** `since`: when a wait for the read budget began (null: granted). */
  waiting(tenant: string, collection: string, since: number | null): void {
    if (this.#stopped) return;
    const l = this.#line(tenant);
    if (l.collection !== collection) {
      l.collection = collection;
      l.fetched = 0;
      l.total = null;
      l.startedAt = Date.now();
    }
    l.waitingSince = since;
  }

  /** The tenant is done (or failed): its line says so until the display stops. */
  finished(tenant: string, text: string): void {
    if (this.#stopped) return;
    this.#line(tenant).done = text;
  }

  /** Prints a log line (ending in a newline) above the progress lines. */
  log(line: string): void {
    if (this.#stopped || !this.#bars.isActive) process.stderr.write(line);
    else this.#bars.log(line);
  }

  /** Clears the progress lines and gives the terminal back. Idempotent. */
  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    // Log lines still buffered are printed first (a redraw flushes them), then the lines are cleared.
    if (this.#bars.isActive) this.#bars.update();
    this.#bars.stop();
  }
}
