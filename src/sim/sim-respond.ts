import type { ServerResponse } from 'node:http';
import type { JsonValue } from '../vocabulary/ids.js';

/** Answers with a JSON body (and extra headers). */
export const send = (
  res: ServerResponse,
  status: number,
  body: JsonValue,
  headers: Record<string, string> = {},
): void => {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
};

/** Answers with a body of the given content type. */
export const sendRaw = (res: ServerResponse, status: number, body: string | Buffer, type: string): void => {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
  res.end(body);
};

/** The 404 of a path outside every route. */
export const sendNotFound = (res: ServerResponse): void => send(res, 404, { errors: [{ message: 'Not Found' }] });
