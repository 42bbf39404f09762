/** Faults injected for the next N matching requests. */
export interface FaultSpec {
  /** stale-page: a list request is answered as if `where` and `page` were absent, with `hasNextPage: true`. */
  kind: 'latency' | 'status' | 'reset' | 'malformed' | 'rate-limit' | 'stale-page';
  count: number;
  /** latency: delay before answering normally (default 200). */
  ms?: number;
  /** status: the status to answer with (default 503). */
  status?: number;
  /** rate-limit: the Retry-After value (default 1). */
  retryAfterSeconds?: number;
  /** Only requests with this method and a path containing this substring. */
  match?: { method?: string; path?: string };
}

export type ActiveFault = Readonly<FaultSpec>;

export class FaultQueue {
  private faults: { spec: FaultSpec; left: number }[] = [];

  add(spec: FaultSpec): void {
    const kinds = ['latency', 'status', 'reset', 'malformed', 'rate-limit', 'stale-page'];
    if (!kinds.includes(spec.kind)) throw new TypeError(`fault kind must be one of ${kinds.join(', ')}`);
    if (!Number.isInteger(spec.count) || spec.count < 1) throw new TypeError('fault count must be a positive integer');
    this.faults.push({ spec: { ...spec }, left: spec.count });
  }

  /** The fault for this request, if one matches (the first queued match is consumed). */
  take(method: string, path: string): ActiveFault | undefined {
    for (const f of this.faults) {
      const m = f.spec.match;
      if (m?.method && m.method.toUpperCase() !== method.toUpperCase()) continue;
      if (m?.path && !path.includes(m.path)) continue;
      f.left--;
      if (f.left <= 0) this.faults = this.faults.filter((x) => x !== f);
      return f.spec;
    }
    return undefined;
  }

  pending(): number {
    return this.faults.reduce((n, f) => n + f.left, 0);
  }

  clear(): void {
    this.faults = [];
  }
}
