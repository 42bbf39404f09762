import type { ServerResponse } from 'node:http';

/** Default length of a `huge` fault's body: 300 MB. */
export const HUGE_DEFAULT_BYTES = 300 * 1024 * 1024;

const HEAD = '{"docs":[';
const TAIL =
  '],"totalDocs":0,"limit":10,"totalPages":1,"page":1,"pagingCounter":1,"hasPrevPage":false,"hasNextPage":false,"prevPage":null,"nextPage":null}';
const SPACES = Buffer.alloc(64 * 1024, 0x20);

/** The smallest `bytes` a huge body can have: the envelope with no padding. */
export const HUGE_MIN_BYTES = HEAD.length + TAIL.length;

/**
 * Answers 200 with a valid, empty list envelope padded with whitespace to exactly `bytes` bytes, written in
 * 64 KiB slices of one shared buffer as the socket drains, so the body is never built in memory. With `chunked`
 * no Content-Length is sent (the length is only known by reading to the end).
 */
export async function sendHugeBody(res: ServerResponse, bytes: number, chunked = false): Promise<void> {
  const total = Math.max(bytes, HUGE_MIN_BYTES);
  res.writeHead(200, {
    'content-type': 'application/json; charset=utf-8',
    ...(chunked ? {} : { 'content-length': String(total) }),
  });
  res.write(HEAD);
  let left = total - HUGE_MIN_BYTES;
  while (left > 0 && !res.destroyed) {
    const n = Math.min(left, SPACES.length);
    left -= n;
    if (!res.write(n === SPACES.length ? SPACES : SPACES.subarray(0, n))) {
      // Wait for the client to read, or to hang up (a capped client stops reading and closes).
      await new Promise<void>((resolve) => {
        const done = () => {
          res.off('drain', done);
          res.off('close', done);
          resolve();
        };
        res.on('drain', done);
        res.on('close', done);
      });
    }
  }
  if (!res.destroyed) res.end(TAIL);
}
