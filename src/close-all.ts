/** One step of a shutdown. */
export type CloseStep = () => unknown;

/**
 * Runs every close step in order, each even when an earlier one failed (as BullMQ's `Worker.close` does), then
 * throws one `AggregateError` with every failure. Callers make it idempotent with `closeOnce`.
 */
export async function closeAll(steps: readonly CloseStep[], what: string): Promise<void> {
  const failures: unknown[] = [];
  for (const step of steps) {
    try {
      await step();
    } catch (err) {
      failures.push(err);
    }
  }
  if (failures.length > 0) throw new AggregateError(failures, `closing ${what} failed`);
}

/**
 * `close` made idempotent: the first call runs it (with that call's arguments), every later call gets the same
 * promise (as BullMQ's `Worker.close`), so a resource closed twice (disposal after an explicit close) closes once.
 */
export function closeOnce<A extends unknown[]>(close: (...args: A) => Promise<void>): (...args: A) => Promise<void> {
  let closing: Promise<void> | null = null;
  return (...args) => {
    closing ??= close(...args);
    return closing;
  };
}
