import { once } from 'node:events';

/** The signals that ask a command to stop: Ctrl-C and a supervisor's stop. */
const STOP_SIGNALS = ['SIGINT', 'SIGTERM'] as const;

/**
 * Runs `fn` with a signal that SIGINT or SIGTERM aborts (`onStop` hears which, each time one comes); the handlers
 * are removed once `fn` settles. Each is a `once` handler, so the same signal a second time does what it does by
 * default (ends the process) while the other is still heard.
 */
export async function untilStopped<T>(
  fn: (stop: AbortSignal) => Promise<T>,
  onStop?: (sig: NodeJS.Signals) => void,
): Promise<T> {
  const stop = new AbortController();
  const onSignal = (sig: NodeJS.Signals) => {
    onStop?.(sig);
    stop.abort();
  };
  for (const sig of STOP_SIGNALS) process.once(sig, onSignal);
  try {
    return await fn(stop.signal);
  } finally {
    for (const sig of STOP_SIGNALS) process.off(sig, onSignal);
  }
}

/** Resolves once `signal` aborts: a command that runs until it is stopped. */
export async function stopped(signal: AbortSignal): Promise<void> {
  if (!signal.aborted) await once(signal, 'abort');
}
