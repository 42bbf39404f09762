import type { Dispatch, Outcome } from './upstream-call.js';

/** What is told of each attempt that got an answer or failed: the route template, never a URL. */
export type RequestReport = (e: { method: string; route: string; status: number; ms: number }) => void;

/**
 * Tells `onRequest` of every attempt once its body is read (or it failed), with its status (0 when no answer
 * came) and how long it took from leaving the gate; without `onRequest`, the layer is the one inside it.
 */
export function reportRequests(
  onRequest: RequestReport | undefined,
): <A extends { readonly status: number }>(next: Dispatch<Outcome<A>>) => Dispatch<Outcome<A>> {
  return (next) => {
    if (!onRequest) return next;
    return async (call, opts) => {
      const started = performance.now();
      const result = await next(call, opts);
      const status = result.ok ? result.value.status : result.status;
      onRequest({ method: call.method, route: call.route, status, ms: Math.round(performance.now() - started) });
      return result;
    };
  };
}
