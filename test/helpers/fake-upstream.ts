import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import qs from 'qs';

/** One request as the fake upstream received it. */
export interface RecordedRequest {
  readonly method: string;
  /** Path without the query string, percent-encoding kept. */
  readonly path: string;
  /** The raw query string (no `?`), as sent. */
  readonly rawQuery: string;
  /** The query string parsed as Payload does (qs, nested brackets). */
  readonly query: Record<string, unknown>;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** A scripted answer. `destroy` drops the socket without answering; `stall` sends headers or nothing, then waits. */
export type ScriptedResponse =
  | { status: number; json?: unknown; body?: string; headers?: Record<string, string> }
  | { destroy: true }
  | { stall: 'headers' | 'body'; status?: number };

export type Handler = (
  req: RecordedRequest,
  raw: { req: IncomingMessage; res: ServerResponse; index: number },
) => ScriptedResponse | undefined | Promise<ScriptedResponse | undefined>;

export interface FakeUpstream {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly requests: RecordedRequest[];
  close(): Promise<void>;
}

/**
 * A programmable upstream on 127.0.0.1:0. Given an array, it answers the n-th request with the n-th entry
 * (the last entry repeats); given a function, it answers whatever the function returns (undefined: the
 * handler answered through `raw.res` itself).
 */
export async function startFakeUpstream(script: Handler | readonly ScriptedResponse[]): Promise<FakeUpstream> {
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const handler: Handler = Array.isArray(script)
    ? (_req, { index }) => script[Math.min(index, script.length - 1)]
    : (script as Handler);
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const rawQuery = q >= 0 ? url.slice(q + 1) : '';
    const recorded: RecordedRequest = {
      method: req.method ?? 'GET',
      path: q >= 0 ? url.slice(0, q) : url,
      rawQuery,
      query: qs.parse(rawQuery, { depth: 10, arrayLimit: 100 }) as Record<string, unknown>,
      headers: req.headers,
      body: Buffer.concat(chunks).toString('utf8'),
    };
    const index = requests.push(recorded) - 1;
    const answer = await handler(recorded, { req, res, index });
    if (answer === undefined) return;
    if ('destroy' in answer) {
      req.socket.destroy();
      return;
    }
    if ('stall' in answer) {
      // Never finish: the client's headers or body timeout must fire. close() destroys the socket.
      if (answer.stall === 'body') {
        res.writeHead(answer.status ?? 200, { 'content-type': 'application/json' });
        res.write('{"docs": [');
      }
      return;
    }
    const body = answer.json !== undefined ? JSON.stringify(answer.json) : (answer.body ?? '');
    res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
    res.end(body);
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      });
      return closing;
    },
  };
}

/** A Payload-style list envelope over `docs`, with overrides. */
export function envelope(docs: readonly object[], over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    docs,
    totalDocs: docs.length,
    limit: 10,
    totalPages: 1,
    page: 1,
    pagingCounter: 1,
    hasPrevPage: false,
    hasNextPage: false,
    prevPage: null,
    nextPage: null,
    ...over,
  };
}
