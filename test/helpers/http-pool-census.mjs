/**
 * Preloaded (`node --import`) into a process whose HTTP pools a test counts (see resource-census.ts). It records
 * every undici Agent that sends a request, and every request created anywhere in the process (the diagnostics
 * channel undici and Node's own fetch both publish to), and writes the counts to $HTTP_POOL_CENSUS at exit:
 * `pools` (Agents that sent), `requests` (created), `pooled` (sent through those Agents). A second pool shows as
 * `pools` 2; a request outside any Agent (fetch, a bare Client) as `requests` > `pooled`.
 */
import { subscribe } from 'node:diagnostics_channel';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(new URL('../../package.json', import.meta.url));
const { Agent } = require('undici');
const pools = new Set();
let requests = 0;
let pooled = 0;
// Agent.prototype.dispatch is DispatcherBase's: patch it there, counting only when `this` is an Agent.
const base = Object.getPrototypeOf(Agent.prototype);
const dispatch = base.dispatch;
base.dispatch = function countedDispatch(opts, handler) {
  if (this instanceof Agent) {
    pools.add(this);
    pooled++;
  }
  return dispatch.call(this, opts, handler);
};
subscribe('undici:request:create', () => {
  requests++;
});
process.on('exit', () => {
  const file = process.env.HTTP_POOL_CENSUS;
  if (file) writeFileSync(file, JSON.stringify({ pools: pools.size, requests, pooled }));
});
