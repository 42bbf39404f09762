import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load-config.js';
import { resolveTenants } from '../../src/config/resolve-tenants.js';
import { watchConflict, watchOf } from '../../src/config/watch-setting.js';
import { DEFAULT_WATCH } from '../../src/vocabulary/watch-knobs.js';

const tenants = (...watches: unknown[]) =>
  watches.map((watch, i) => ({ slug: `t${i}`, apiKeyEnv: 'K_ONE', ...(watch === undefined ? {} : { watch }) }));
const config = (watch: unknown, ...tenantWatches: unknown[]) =>
  parseConfig({
    baseUrl: 'https://partners.example.org',
    ...(watch === undefined ? {} : { watch }),
    tenants: tenants(...(tenantWatches.length > 0 ? tenantWatches : [undefined])),
  });
const watchOfEach = (c: ReturnType<typeof config>) => c.tenants.map((t) => watchOf(c, t));

describe('watchOf: the knobs a tenant is watched with', () => {
  it('watches nobody without a watch setting, or with false', () => {
    expect(watchOfEach(config(undefined))).toEqual([null]);
    expect(watchOfEach(config(false))).toEqual([null]);
  });

  it('gives the default knobs for true, durations in milliseconds', () => {
    expect(watchOfEach(config(true))).toEqual([DEFAULT_WATCH]);
    expect(DEFAULT_WATCH).toEqual({ maxShare: 0.6, idleShare: 0.2, hotMs: 10_000, allMs: 120_000 });
  });

  it('fills the knobs an object leaves out from the defaults, reading "1m30s" as 90000 ms', () => {
    expect(watchOfEach(config({ maxShare: 0.5, all: '1m30s' }))).toEqual([
      { maxShare: 0.5, idleShare: 0.2, hotMs: 10_000, allMs: 90_000 },
    ]);
  });

  it('lets a tenant turn watch on or off for itself, its boolean replacing the top-level setting', () => {
    expect(watchOfEach(config(undefined, undefined, true, { hot: '5s' }))).toEqual([
      null,
      DEFAULT_WATCH,
      { ...DEFAULT_WATCH, hotMs: 5000 },
    ]);
    expect(watchOfEach(config({ maxShare: 0.4 }, undefined, false, true))).toEqual([
      { ...DEFAULT_WATCH, maxShare: 0.4 },
      null,
      // A tenant's true under a top-level object: on, with the top level's knobs.
      { ...DEFAULT_WATCH, maxShare: 0.4 },
    ]);
  });

  it("merges a tenant's object over the top-level object knob by knob", () => {
    const c = config({ maxShare: 0.4, hot: '20s' }, { hot: '5s', idleShare: 0.1 });
    expect(watchOfEach(c)).toEqual([{ maxShare: 0.4, idleShare: 0.1, hotMs: 5000, allMs: 120_000 }]);
  });

  it('is what resolveTenants gives each tenant as watch', () => {
    const c = config({ maxShare: 0.4 }, undefined, false);
    expect(resolveTenants(c, { K_ONE: 'key' }).map((t) => t.watch)).toEqual([
      { ...DEFAULT_WATCH, maxShare: 0.4 },
      null,
    ]);
  });
});

describe('watchConflict: knobs checked across fields once merged', () => {
  const raw = (watch: unknown, ...tenantWatches: unknown[]) => ({ watch, tenants: tenants(...tenantWatches) }) as never;

  it('finds none in consistent settings', () => {
    expect(watchConflict(raw(true, { maxShare: 0.3, idleShare: 0.3 }, false, { hot: '2m', all: '2m' }))).toBeNull();
  });

  it('names watch.idleShare when idleShare is above maxShare, the default counting', () => {
    expect(watchConflict(raw({ idleShare: 0.7 }, undefined))).toBe(
      'watch.idleShare: must not be above maxShare (idleShare 0.7, maxShare 0.6 by default)',
    );
  });

  it("names the tenant's field when the merge with the top level makes the conflict", () => {
    expect(watchConflict(raw({ maxShare: 0.3 }, undefined, { idleShare: 0.4 }))).toBe(
      'tenants.1.watch.idleShare: must not be above maxShare (idleShare 0.4, maxShare 0.3 from the top-level watch)',
    );
    expect(watchConflict(raw({ hot: '1m' }, { all: '30s' }))).toBe(
      'tenants.0.watch.all: must be at least hot (all "30s", hot "1m" from the top-level watch)',
    );
  });

  it('allows a pair split between the top level and a tenant when the merge is consistent', () => {
    expect(watchConflict(raw({ idleShare: 0.1 }, { maxShare: 0.15 }))).toBeNull();
  });
});
