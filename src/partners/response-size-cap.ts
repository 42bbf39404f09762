import { StringDecoder } from 'node:string_decoder';
import { ResponseTooLargeError, UpstreamError } from '../errors.js';
import { errorCode } from './network-cause.js';
import {
  type AttemptOptions,
  abortedError,
  type Dispatch,
  type Outcome,
  optionAtLeastZero,
  placeOf,
  type ReadAnswer,
  type StreamedAnswer,
  type UpstreamCall,
} from './upstream-call.js';

/** Default `maxResponseBytes`: 32 MiB. */
export const DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

/**
 * Reads the body as text, stopping (and dropping the connection) as soon as it passes `maxBytes`; null then. Each
 * chunk is decoded as it lands (a character split between two chunks is kept for the next): the body is never
 * held as bytes and as text at once, and no buffer of the whole body is made (a large one, freed, stays in the
 * process' malloc heap).
 */
async function readCapped(answer: StreamedAnswer, maxBytes: number): Promise<string | null> {
  const declared = Number(answer.headers['content-length'] ?? Number.NaN);
  if (declared > maxBytes) {
    answer.body.destroy();
    return null;
  }
  const decoder = new StringDecoder('utf8');
  let text = '';
  let size = 0;
  for await (const chunk of answer.body) {
    size += chunk.length;
    if (size > maxBytes) {
      answer.body.destroy();
      return null;
    }
    text += decoder.write(chunk);
  }
  return text + decoder.end();
}

/** The body broke off: lost for a stopped caller, else worth another try (a 2xx answered all the same). */
function bodyFailure(call: UpstreamCall, opts: AttemptOptions, status: number, err: unknown): Outcome<never> {
  if (opts.signal.aborted)
    return { ok: false, error: abortedError(call, opts.signal, 'unknown'), retry: 'final', status };
  const code = errorCode(err);
  const error = new UpstreamError(call.method, call.route, status, `body not received (${code ?? 'error'})`, {
    code: 'US_UPSTREAM_UNAVAILABLE',
    outcome: status >= 200 && status < 300 ? 'answered' : 'unknown',
    cause: err,
    ...placeOf(call),
  });
  return { ok: false, error, retry: 'transient', status };
}

/**
 * The response-size cap: reads each answer's body whole, up to `maxBytes` counted while streaming (and refused up
 * front from `Content-Length`). Over it the attempt fails with `US_RESPONSE_TOO_LARGE`, never retried: the same
 * request would only fetch the same body again. Default 32 MiB.
 */
export function capResponseSize(
  maxBytes?: number,
): (next: Dispatch<Outcome<StreamedAnswer>>) => Dispatch<Outcome<ReadAnswer>> {
  const max = optionAtLeastZero('maxResponseBytes', maxBytes, DEFAULT_MAX_RESPONSE_BYTES);
  return (next) => async (call, opts) => {
    const sent = await next(call, opts);
    if (!sent.ok) return sent;
    const { status, headers } = sent.value;
    let text: string | null;
    try {
      text = await readCapped(sent.value, max);
    } catch (err) {
      return bodyFailure(call, opts, status, err);
    }
    if (text === null) {
      const error = new ResponseTooLargeError(call.method, call.route, status, max, placeOf(call));
      return { ok: false, error, retry: 'final', status };
    }
    return { ok: true, value: { status, headers, text } };
  };
}
