import { onTestFinished } from 'vitest';
import { type Simulator, type SimulatorOptions, startSimulator } from '../../src/sim/start-simulator.js';
import type { JsonObject } from '../../src/vocabulary/ids.js';

export interface Api {
  sim: Simulator;
  tenant: string;
  key: string;
  base: string;
  /** A request with the first tenant's key; returns status, headers and parsed JSON (or text). */
  req(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Res>;
  get(path: string): Promise<Res>;
}

export interface Res {
  status: number;
  headers: Headers;
  json: JsonObject;
  text: string;
}

/** A simulator on a free port with limits off unless given, closed when the test (or file) finishes. */
export async function openSim(opts: SimulatorOptions = {}, perTest = true): Promise<Api> {
  const sim = await startSimulator({ port: 0, records: 12, readLimit: 0, writeLimit: 0, ...opts });
  if (perTest) onTestFinished(() => sim.close());
  const t = sim.tenants[0];
  if (!t) throw new Error('no tenant');
  const base = `${sim.url}/partners/2026-02/${t.slug}`;
  const req = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const r = await fetch(path.startsWith('http') ? path : `${base}/${path}`, {
      method,
      headers: {
        authorization: `users API-Key ${t.key}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
    });
    const text = await r.text();
    let json: JsonObject = {};
    try {
      json = JSON.parse(text) as JsonObject;
    } catch {
      // not JSON (HTML, images, malformed faults): the text is there
    }
    return { status: r.status, headers: r.headers, json, text };
  };
  return { sim, tenant: t.slug, key: t.key, base, req, get: (p) => req('GET', p) };
}

export const docsOf = (r: Res): JsonObject[] => r.json.docs as JsonObject[];
