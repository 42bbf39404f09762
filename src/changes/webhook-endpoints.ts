import { createHash } from 'node:crypto';
import type { Config } from '../config/config-schema.js';
import { ConfigError } from '../errors.js';
import { redactUrl } from '../vocabulary/redact-url.js';

/** One configured webhook endpoint of a tenant, with the id its position and jobs are kept under. */
export interface WebhookEndpoint {
  /** `ep_` + 16 hex digits of SHA-256 over the tenant and the URL: stable across restarts and reloads. */
  readonly id: string;
  readonly tenant: string;
  readonly url: string;
  /** The environment variable holding the secret (the secret itself is read only when signing). */
  readonly secretEnv: string;
  /** Where it is in the config, for messages naming the field (`tenants.0.webhooks.1`). */
  readonly path: string;
  readonly collections?: readonly string[];
  readonly kinds?: readonly string[];
  /** Only deletes with these reasons (`deleted`, `unpublished`); see `ChangeFilter.reasons`. */
  readonly reasons?: readonly string[];
}

export const endpointId = (tenant: string, url: string): string =>
  `ep_${createHash('sha256').update(`${tenant}\n${url}`).digest('hex').slice(0, 16)}`;

/** Every webhook endpoint of the config, tenant by tenant. */
export function endpointsOf(config: Config): WebhookEndpoint[] {
  return config.tenants.flatMap((t, i) =>
    (t.webhooks ?? []).map((w, j) => ({
      id: endpointId(t.slug, w.url),
      tenant: t.slug,
      url: w.url,
      secretEnv: w.secretEnv,
      path: `tenants.${i}.webhooks.${j}`,
      ...(w.collections ? { collections: w.collections } : {}),
      ...(w.kinds ? { kinds: w.kinds } : {}),
      ...(w.reasons ? { reasons: w.reasons } : {}),
    })),
  );
}

/** A URL as logs and listings show it: no user or password, no query string (either may carry a token). */
export const safeUrl = (url: string): string => redactUrl(url, 'location', '(not a URL)');

/**
 * The signing key of an endpoint from its secret (`whsec_` + base64, as Standard Webhooks gives them). Throws
 * `ConfigError` naming the field and the variable, never the value.
 */
export function signingKey(endpoint: WebhookEndpoint, env: NodeJS.ProcessEnv): Buffer {
  const value = env[endpoint.secretEnv];
  const where = `${endpoint.path}.secretEnv: environment variable ${endpoint.secretEnv}`;
  if (!value) throw new ConfigError(`${where} is not set`);
  const base64 = value.startsWith('whsec_') ? value.slice('whsec_'.length) : '';
  const key = Buffer.from(base64, 'base64');
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(base64) || key.length < 16)
    throw new ConfigError(`${where} is not a webhook secret ("whsec_" and at least 16 bytes in base64)`);
  return key;
}

/** Checks every endpoint's secret up front (the worker's start): throws `ConfigError` for the first bad one. */
export function checkSecrets(endpoints: readonly WebhookEndpoint[], env: NodeJS.ProcessEnv): void {
  for (const e of endpoints) signingKey(e, env);
}
