import type { IncomingMessage } from 'node:http';
import type { CollectionSlug } from '../vocabulary/collections.js';
import { tooDeepAt } from '../vocabulary/json-depth.js';
import { SimHttpError, validationError } from './sim-query.js';

const MAX_BODY = 1_000_000;
/**
 * Deepest nesting a write body may have: Payload on MongoDB cannot store a document nested deeper than 100 levels,
 * and a record nested thousands deep would break every later read of its collection.
 */
export const MAX_BODY_DEPTH = 100;

/** A parsed write body (undefined when empty); too large, not JSON or too deep are refused as Payload does. */
export const readBody = (req: IncomingMessage, collection: CollectionSlug): Promise<unknown> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) reject(new SimHttpError(413, 'Request body too large'));
      else chunks.push(c);
    });
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      if (text.trim() === '') return resolve(undefined);
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        return reject(new SimHttpError(400, 'The request body is not valid JSON'));
      }
      const deep = tooDeepAt(body, MAX_BODY_DEPTH);
      if (deep === null) return resolve(body);
      const field = deep.split(/[.[]/)[0] || 'body';
      reject(validationError(collection, [{ path: field, message: `nested more than ${MAX_BODY_DEPTH} levels deep` }]));
    });
    req.on('error', reject);
  });
