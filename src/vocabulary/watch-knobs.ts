/**
 * How a watched tenant is kept live (config `watch`, docs/watch.md): the share of each key's read budget watch may
 * use at most and when nothing changes, and the freshness targets for changing collections and for all.
 */
export interface WatchKnobs {
  /** The share of the key's read budget watch may use at most (its probes and the passes and searches they start). */
  readonly maxShare: number;
  /** The share of the key's read budget watch's probes use when nothing changes. */
  readonly idleShare: number;
  /** The freshness target of a collection that is changing, in milliseconds. */
  readonly hotMs: number;
  /** The freshness target of every collection, in milliseconds. */
  readonly allMs: number;
}

/** `"watch": true`: the defaults. */
export const DEFAULT_WATCH: WatchKnobs = { maxShare: 0.6, idleShare: 0.2, hotMs: 10_000, allMs: 120_000 };
