/** Plain words for the network errors a request meets, by their code. */
const WORDS: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused (nothing listens there)',
  ECONNRESET: 'connection reset by the other side',
  ENOTFOUND: 'host name not found (DNS)',
  EAI_AGAIN: 'DNS lookup failed for now',
  ETIMEDOUT: 'timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  EADDRNOTAVAIL: 'address not available',
  EPIPE: 'connection closed while sending',
  UND_ERR_CONNECT_TIMEOUT: 'connect timed out',
  UND_ERR_HEADERS_TIMEOUT: 'no answer in time (headers timeout)',
  UND_ERR_BODY_TIMEOUT: 'the answer stalled (body timeout)',
  UND_ERR_SOCKET: 'the connection failed',
  CERT_HAS_EXPIRED: 'TLS certificate expired',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'self-signed TLS certificate',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'TLS certificate not trusted',
  ERR_TLS_CERT_ALTNAME_INVALID: 'TLS certificate is for another host name',
};

/** `host:port` of a base URL, the port spelt out even when it is the scheme's default. */
export function hostPort(baseUrl: string): string {
  try {
    const u = new URL(baseUrl);
    return `${u.hostname}:${u.port || (u.protocol === 'https:' ? '443' : '80')}`;
  } catch {
    return '(unparseable baseUrl)';
  }
}

/**
 * Why a request got no answer, naming where it went and the cause: `ECONNREFUSED at 127.0.0.1:4010: connection
 * refused (nothing listens there)`. Never a URL path or a query string.
 */
export const networkCause = (code: string | undefined, baseUrl: string): string =>
  `${code ?? 'network error'} at ${hostPort(baseUrl)}${code && WORDS[code] ? `: ${WORDS[code]}` : ''}`;

/**
 * The code of a network error, looking through undici's wrappers (`UND_ERR_SOCKET`, a cause chain) for the
 * system's own (`ECONNRESET`, `ECONNREFUSED`); undefined when there is none.
 */
export function errorCode(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 5; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && code !== 'UND_ERR_SOCKET' && code !== 'UND_ERR') return code;
    const next = (e as { cause?: unknown }).cause;
    if (next === undefined) return typeof code === 'string' ? code : undefined;
    e = next;
  }
  return undefined;
}
