import { ConfigError } from '../errors.js';
import { durationSeconds } from '../vocabulary/duration.js';
import { DEFAULT_WATCH, type WatchKnobs } from '../vocabulary/watch-knobs.js';
import type { Config, TenantConfig, WatchKnobsSetting, WatchSetting } from './config-schema.js';

/** Knobs as written somewhere, and how a message says where (`""`: the object being checked). */
interface Layer {
  readonly knobs: WatchKnobsSetting;
  readonly from: string;
}

/** `120000` as `"2m"`, `10000` as `"10s"`: the defaults written as a config would write them. */
const durationText = (ms: number): string => (ms % 60_000 === 0 ? `${ms / 60_000}m` : `${ms / 1000}s`);

const DEFAULTS: Layer = {
  knobs: {
    maxShare: DEFAULT_WATCH.maxShare,
    idleShare: DEFAULT_WATCH.idleShare,
    hot: durationText(DEFAULT_WATCH.hotMs),
    all: durationText(DEFAULT_WATCH.allMs),
  },
  from: ' by default',
};

/**
 * The layers of knobs in force, the last one winning knob by knob; null when watch is off. A tenant's boolean
 * replaces the top-level setting; a tenant's object lies over the top-level object, if any.
 */
function layersOf(top: WatchSetting | undefined, own: WatchSetting | undefined): Layer[] | null {
  const setting = own ?? top;
  if (setting === undefined || setting === false) return null;
  // A tenant's `true` under a top-level object turns watch on with the top level's knobs.
  if (setting === true)
    return typeof top === 'object' ? [DEFAULTS, { knobs: top, from: ' from the top-level watch' }] : [DEFAULTS];
  const under = own !== undefined && typeof top === 'object' ? [{ knobs: top, from: ' from the top-level watch' }] : [];
  return [DEFAULTS, ...under, { knobs: setting, from: '' }];
}

/** The knob `key` from the last layer that sets it (the defaults set every one). */
function pick<K extends keyof WatchKnobsSetting>(
  layers: readonly Layer[],
  key: K,
): { value: NonNullable<WatchKnobsSetting[K]>; from: string } {
  const layer = layers.findLast((l) => l.knobs[key] !== undefined) ?? DEFAULTS;
  return { value: layer.knobs[key] as NonNullable<WatchKnobsSetting[K]>, from: layer.from };
}

function msOf(text: string): number {
  const seconds = durationSeconds(text);
  if (seconds === null) throw new ConfigError(`watch: "${text}" is not a duration`);
  return Math.round(seconds * 1000);
}

/**
 * How `tenant` is watched: `DEFAULT_WATCH` under the top-level `watch` object under the tenant's own, durations in
 * milliseconds; null when it is not watched (no `watch`, or `false` where it counts). A tenant's `false` turns it
 * off; its `true` turns it on with the top-level knobs (the defaults when the top level says `true` or nothing); its
 * object overrides the top-level object knob by knob.
 */
export function watchOf(config: Pick<Config, 'watch'>, tenant: Pick<TenantConfig, 'watch'>): WatchKnobs | null {
  const layers = layersOf(config.watch, tenant.watch);
  if (layers === null) return null;
  return {
    maxShare: pick(layers, 'maxShare').value,
    idleShare: pick(layers, 'idleShare').value,
    hotMs: msOf(pick(layers, 'hot').value),
    allMs: msOf(pick(layers, 'all').value),
  };
}

/** The first knob that contradicts another once the layers are merged, as `knob: message`; null when none. */
function conflictOf(layers: readonly Layer[]): string | null {
  const idle = pick(layers, 'idleShare');
  const max = pick(layers, 'maxShare');
  if (idle.value > max.value) {
    return `idleShare: must not be above maxShare (idleShare ${idle.value}${idle.from}, maxShare ${max.value}${max.from})`;
  }
  const all = pick(layers, 'all');
  const hot = pick(layers, 'hot');
  if (msOf(all.value) < msOf(hot.value)) {
    return `all: must be at least hot (all "${all.value}"${all.from}, hot "${hot.value}"${hot.from})`;
  }
  return null;
}

/**
 * The first `watch` whose merged knobs contradict each other (`idleShare` above `maxShare`, `all` below `hot`), as
 * one line naming the field (`tenants.1.watch.idleShare: …`); null when none. Checked after the merge, since a
 * tenant may set one knob of a pair and the top level (or the default) the other.
 */
export function watchConflict(config: Pick<Config, 'watch' | 'tenants'>): string | null {
  const places = [
    { path: 'watch', layers: layersOf(config.watch, undefined) },
    ...config.tenants.map((t, i) => ({
      path: `tenants.${i}.watch`,
      // A tenant without its own `watch` has the top level's, checked once above.
      layers: t.watch === undefined ? null : layersOf(config.watch, t.watch),
    })),
  ];
  for (const { path, layers } of places) {
    const conflict = layers && conflictOf(layers);
    if (conflict) return `${path}.${conflict}`;
  }
  return null;
}
