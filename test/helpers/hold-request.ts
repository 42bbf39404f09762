import type { Simulator } from '../../src/sim/start-simulator.js';

/**
 * Holds the `n`th request to the simulator whose path contains `match`, counted from now, until `release()`:
 * `reached` resolves when it arrives. A process can then be killed or overtaken at a known page.
 */
export function holdRequest(sim: Simulator, n: number, match: string): { reached: Promise<void>; release(): void } {
  let open = () => {};
  const gate = new Promise<void>((r) => {
    open = r;
  });
  let arrived = () => {};
  const reached = new Promise<void>((r) => {
    arrived = r;
  });
  let seen = 0;
  const off = sim.controls.beforeRequest(async (r) => {
    if (!r.path.includes(match)) return;
    if (++seen === n) {
      arrived();
      await gate;
    }
  });
  return {
    reached,
    release: () => {
      off();
      open();
    },
  };
}
