import { UnderstudyError } from '../errors.js';
import { COLLECTIONS, type CollectionSlug, isCollectionSlug } from '../vocabulary/collections.js';
import type { JsonObject } from '../vocabulary/ids.js';
import { parseParams } from './parse-params.js';
import { viewOf } from './sim-db.js';
import type { FaultSpec } from './sim-faults.js';
import { type MutateResult, type MutateSpec, mutate } from './sim-mutate.js';
import type { RateLimits } from './sim-rate-limit.js';
import { shapeDoc } from './sim-shape.js';
import {
  type BeforeRequestHook,
  emptyCounters,
  type RequestLogEntry,
  type SimCounters,
  type SimState,
  shapeCtx,
} from './sim-state.js';

export interface MutatorSpec {
  tenant: string;
  /** Default: every collection but custom-attributes, in turn. */
  collection?: CollectionSlug;
  /** Ticks per second. */
  perSecond: number;
  /** Per tick; default 0 creates, 1 edit, 0 deletes. */
  creates?: number;
  edits?: number;
  deletes?: number;
  sameUpdatedAt?: boolean;
}

export interface SimControls {
  /** The next `count` matching data requests get the fault. */
  injectFaults(spec: FaultSpec): void;
  clearFaults(): void;
  /** Runs before each data request is handled (awaited); returns an unsubscribe function. */
  beforeRequest(hook: BeforeRequestHook): () => void;
  /** Deterministic creates, edits and deletes (see docs/simulator.md). */
  mutate(spec: MutateSpec): MutateResult;
  startMutator(spec: MutatorSpec): void;
  stopMutator(): void;
  counters(): SimCounters;
  requestLog(): RequestLogEntry[];
  /** Clears faults, counters, the request log and the rate-limit windows (not the data). */
  reset(): void;
  setRateLimits(limits: Partial<RateLimits>): void;
  /**
   * Records of a collection as a published `?depth=0` read returns them (never-published ones left out), in id
   * order; with `{ draft: true }`, as a `draft=true` read does (every record, newest draft where one exists).
   */
  docs(tenant: string, collection: CollectionSlug, opts?: { readonly draft?: boolean }): readonly JsonObject[];
}

/** Runs a mutation through the simulator's own PRNG and clock. */
export function runMutation(s: SimState, spec: MutateSpec): MutateResult {
  const t = s.tenants.find((x) => x.slug === spec.tenant);
  if (!t) throw new UnderstudyError('US_VALIDATION', `unknown tenant "${spec.tenant}"`);
  if (!isCollectionSlug(spec.collection))
    throw new UnderstudyError('US_VALIDATION', `unknown collection "${String(spec.collection)}"`);
  return mutate(t, spec, s.mutatePrng, s.now(), () => ++s.mutationRev);
}

/** Records of a collection as a depth-0 read (published, or draft) returns them, in id order. */
export function docsOf(s: SimState, tenant: string, c: CollectionSlug, draft = false): readonly JsonObject[] {
  const t = s.tenants.find((x) => x.slug === tenant);
  if (!t) throw new UnderstudyError('US_VALIDATION', `unknown tenant "${tenant}"`);
  const p = parseParams(draft ? 'depth=0&draft=true' : 'depth=0', { maxLimit: s.maxLimit });
  const ctx = shapeCtx(s, t, p);
  return t.collections[c]
    .ordered('id', draft, { locale: 'en', fallback: 'en' })
    .map((r) => shapeDoc(c, viewOf(r, draft), ctx, 0));
}

/** A running mutator's timer, held by the simulator it belongs to. */
export interface MutatorSlot {
  timer: NodeJS.Timeout | undefined;
}

const MUTATOR_CYCLE = COLLECTIONS.filter((c) => c !== 'custom-attributes');

/** Starts ticking mutations into the slot (the caller stops any previous one first). */
function startMutator(s: SimState, slot: MutatorSlot, spec: MutatorSpec): void {
  if (!(spec.perSecond > 0)) throw new UnderstudyError('US_VALIDATION', 'perSecond must be a positive number');
  let tick = 0;
  const timer = setInterval(
    () => {
      const collection = spec.collection ?? (MUTATOR_CYCLE[tick % MUTATOR_CYCLE.length] as CollectionSlug);
      tick++;
      runMutation(s, {
        tenant: spec.tenant,
        collection,
        creates: spec.creates ?? 0,
        edits: spec.edits ?? 1,
        deletes: spec.deletes ?? 0,
        ...(spec.sameUpdatedAt ? { sameUpdatedAt: true } : {}),
      });
    },
    Math.max(1, Math.round(1000 / spec.perSecond)),
  );
  timer.unref();
  slot.timer = timer;
}

const stopMutator = (slot: MutatorSlot): void => {
  if (slot.timer) clearInterval(slot.timer);
  slot.timer = undefined;
};

/** The controls of one simulator, over its state and its mutator slot. */
export function createControls(s: SimState, slot: MutatorSlot): SimControls {
  return {
    injectFaults: (spec) => s.faults.add(spec),
    clearFaults: () => s.faults.clear(),
    beforeRequest: (hook) => {
      s.hooks.add(hook);
      return () => {
        s.hooks.delete(hook);
      };
    },
    mutate: (spec) => runMutation(s, spec),
    startMutator: (spec) => {
      stopMutator(slot);
      startMutator(s, slot, spec);
    },
    stopMutator: () => stopMutator(slot),
    counters: () => structuredClone(s.counters),
    requestLog: () => [...s.log],
    reset: () => {
      s.faults.clear();
      s.counters = emptyCounters();
      s.log.length = 0;
      s.limiter.reset();
    },
    setRateLimits: (l) => {
      s.limiter.limits = { ...s.limiter.limits, ...l };
    },
    docs: (tenant, collection, opts) => docsOf(s, tenant, collection, opts?.draft ?? false),
  };
}
