import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { text } from 'node:stream/consumers';
import { request } from 'undici';

export interface DropRule {
  readonly method: string;
  /** The request path (with query) contains this. */
  readonly path: string;
  count: number;
}

/**
 * An HTTP proxy in front of the simulator that can forward a request, let the upstream apply it, and then
 * drop the connection instead of answering: the "request went out, no answer came" case, without timing.
 */
export async function startDroppingProxy(target: string) {
  const rules: DropRule[] = [];
  let dropped = 0;
  /** Every request relayed, with its body as the bytes sent (to see what a client wrote, exactly). */
  const received: { method: string; path: string; body: string }[] = [];
  let beforeAnswer: ((method: string, path: string) => Promise<void>) | null = null;
  const server = createServer(async (req, res) => {
    try {
      const body = await text(req);
      received.push({ method: req.method ?? 'GET', path: req.url ?? '/', body });
      const headers: IncomingHttpHeaders = { ...req.headers };
      delete headers.host;
      delete headers.connection;
      delete headers['content-length'];
      const up = await request(`${target}${req.url ?? '/'}`, {
        method: (req.method ?? 'GET') as 'GET',
        headers: headers as Record<string, string>,
        body: body === '' ? null : body,
      });
      const answer = await up.body.text();
      await beforeAnswer?.(req.method ?? 'GET', req.url ?? '/');
      const rule = rules.find((r) => r.count > 0 && r.method === req.method && (req.url ?? '').includes(r.path));
      if (rule) {
        rule.count--;
        dropped++;
        req.socket.destroy();
        return;
      }
      res.writeHead(up.statusCode, { 'content-type': 'application/json', ...pick(up.headers) });
      res.end(answer);
    } catch {
      req.socket.destroy();
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    /** The next `count` matching requests are applied upstream and then get no answer. */
    dropAfterApplying(rule: DropRule) {
      rules.push({ ...rule });
    },
    dropped: () => dropped,
    received: () => [...received],
    /** Runs once the upstream has answered a request, before the answer is relayed (e.g. to hold it). */
    beforeAnswer(fn: (method: string, path: string) => Promise<void>) {
      beforeAnswer = fn;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

const pick = (h: Record<string, string | string[] | undefined>): Record<string, string> => {
  const out: Record<string, string> = {};
  for (const k of ['retry-after', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset']) {
    const v = h[k];
    if (typeof v === 'string') out[k] = v;
  }
  return out;
};
