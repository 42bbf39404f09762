import { Agent } from 'undici';
import { type CloseStep, closeAll } from '../close-all.js';
import type { ResolvedTenant } from '../config/resolve-tenants.js';
import type { Logger } from '../log.js';
import { createHttpPartnersClient, partnersAgentOptions } from '../partners/http-partners-client.js';
import { keyHash } from '../partners/key-hash.js';
import { createMemoryRateGate } from '../partners/memory-rate-gate.js';
import type { PartnersClient } from '../partners/partners-client.js';
import type { RateBudget, RateGate } from '../partners/rate-gate.js';
import { openSqliteStore } from '../store/sqlite-store.js';
import type { Store } from '../store/store.js';

/** Builds the rate gate for one API key; one gate per key, shared by every tenant that uses that key. */
export type GateFactory = (keyHash: string, budget: RateBudget) => RateGate;

export interface AppOptions {
  readonly baseUrl: string;
  readonly database: string;
  readonly log: Logger;
  /** Defaults to in-memory gates (one process); the worker passes Redis-backed ones. */
  readonly gateFor?: GateFactory;
  /** Longest response body read from the upstream (config `maxResponseBytes`); the client's default when absent. */
  readonly maxResponseBytes?: number;
  readonly onRequest?: (e: { tenant: string; method: string; route: string; status: number; ms: number }) => void;
}

/** What the commands work with: the store, a client per tenant, and one `close()` for all of it. */
export interface App extends AsyncDisposable {
  readonly store: Store;
  readonly log: Logger;
  clientFor(tenant: ResolvedTenant): PartnersClient;
  close(): Promise<void>;
}

/**
 * The composition root: the only place that opens the database, the HTTP pool and the rate gates.
 * Closing runs every step even when one fails, in reverse order of construction.
 */
export async function createApp(opts: AppOptions): Promise<App> {
  const store = await openSqliteStore(opts.database);
  const agent = new Agent(partnersAgentOptions());
  const gates = new Map<string, RateGate>();
  const gateFor: GateFactory = opts.gateFor ?? ((_hash, budget) => createMemoryRateGate(budget));
  let closing: Promise<void> | null = null;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      const steps: CloseStep[] = [
        ...[...gates.values()].map((g) => () => g.close()),
        () => agent.close(),
        () => store.close(),
      ];
      await closeAll(steps, 'understudy');
    })();
    return closing;
  };
  return {
    store,
    log: opts.log,
    clientFor(tenant) {
      const hash = keyHash(tenant.apiKey);
      let gate = gates.get(hash);
      if (!gate) {
        gate = gateFor(hash, tenant.budget);
        gates.set(hash, gate);
      }
      const onRequest = opts.onRequest;
      return createHttpPartnersClient({
        baseUrl: opts.baseUrl,
        tenant: tenant.slug,
        apiKey: tenant.apiKey,
        gate,
        dispatcher: agent,
        ...(opts.maxResponseBytes === undefined ? {} : { maxResponseBytes: opts.maxResponseBytes }),
        log: opts.log.child({ tenant: tenant.slug }),
        ...(onRequest ? { onRequest: (e) => onRequest({ tenant: tenant.slug, ...e }) } : {}),
      });
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}
