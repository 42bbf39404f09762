import type { RateGate } from '../partners/rate-gate.js';
import type { OpsMetrics } from './metrics.js';

/** Wraps a rate gate so every admitted request reports how long it waited; the gate's behaviour is unchanged. */
export function instrumentGate(gate: RateGate, metrics: Pick<OpsMetrics, 'gateWaited'>): RateGate {
  return {
    async acquire(kind, opts) {
      const waited = await gate.acquire(kind, opts);
      metrics.gateWaited({ kind, ms: waited });
      return waited;
    },
    settle: (kind) => gate.settle(kind),
    release: (kind) => gate.release(kind),
    pause: (ms) => gate.pause(ms),
    close: () => gate.close(),
  };
}
