/** One step of a shutdown. */
export type CloseStep = () => unknown;

/**
 * Runs every close step in order, each even when an earlier one failed (as BullMQ's `Worker.close` does), then
 * throws one `AggregateError` with every failure. Callers memoize the returned promise to stay idempotent.
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
