import { Counter, Histogram, type Registry } from 'prom-client';

/** What serve counts (on `/metrics` of `serve --http`): requests and their latency by route and status, refusals by token. */
export interface ServeMetrics {
  /** One request answered: its route pattern (never the path: ids would explode the series), method, status. */
  answered(route: string, method: string, status: number, seconds: number): void;
  /** A 401, 403 or 429, by the token's name (`unknown` for a 401). */
  refused(status: 401 | 403 | 429, token: string): void;
}

export function serveMetrics(registry: Registry): ServeMetrics {
  const requests = new Counter({
    name: 'understudy_serve_requests_total',
    help: 'Requests serve answered, by route pattern, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'understudy_serve_request_duration_seconds',
    help: 'Time serve took to answer (to the first byte of a stream), by route pattern, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10, 30, 60],
    registers: [registry],
  });
  const refusals = new Counter({
    name: 'understudy_serve_refused_total',
    help: 'Requests refused with 401, 403 or 429, by token name (unknown when no configured token was presented)',
    labelNames: ['status', 'token'] as const,
    registers: [registry],
  });
  return {
    answered(route, method, status, seconds) {
      const labels = { route, method, status: String(status) };
      requests.inc(labels);
      latency.observe(labels, seconds);
    },
    refused(status, token) {
      refusals.inc({ status: String(status), token });
    },
  };
}
