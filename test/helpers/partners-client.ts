import type { Logger } from '../../src/log.js';
import { reserveAtGate, throughGate } from '../../src/partners/gate-layer.js';
import { type HttpTransportOptions, httpTransport } from '../../src/partners/http-transport.js';
import { parseAnswers } from '../../src/partners/parse-answer.js';
import type { PartnersClient } from '../../src/partners/partners-client.js';
import { partnersRoutes } from '../../src/partners/partners-routes.js';
import type { RateGate } from '../../src/partners/rate-gate.js';
import { type RequestReport, reportRequests } from '../../src/partners/request-report.js';
import { capResponseSize } from '../../src/partners/response-size-cap.js';
import { type RetryTiming, retryRequests } from '../../src/partners/retry-requests.js';
import type { TenantSlug } from '../../src/vocabulary/ids.js';

/** What a test sets of a tenant's client: each layer's options in one object. */
export interface HttpClientOptions extends HttpTransportOptions {
  readonly tenant: TenantSlug;
  readonly gate: RateGate;
  readonly retry?: RetryTiming;
  readonly maxResponseBytes?: number;
  readonly log?: Logger;
  readonly sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  readonly random?: () => number;
  readonly now?: () => number;
  readonly onRequest?: RequestReport;
}

/**
 * A tenant's client for a test that builds one by hand (tests of the client, of sync over its two ports): the
 * route table over the same layers in the same order as `createApp`'s `clientFor` (src/app/create-app.ts).
 */
export function createHttpPartnersClient(opts: HttpClientOptions): PartnersClient {
  const { gate } = opts;
  const sent = httpTransport(opts);
  const read = capResponseSize(opts.maxResponseBytes)(sent);
  const timed = reportRequests(opts.onRequest)(read);
  const decoded = parseAnswers({ secret: opts.apiKey, ...(opts.now ? { now: opts.now } : {}) })(
    throughGate(gate)(timed),
  );
  const send = retryRequests({
    ...opts.retry,
    log: opts.log,
    sleep: opts.sleep,
    random: opts.random,
    pauseKey: (ms) => gate.pause(ms),
  })(decoded);
  return partnersRoutes(opts.tenant, send, reserveAtGate(gate));
}
