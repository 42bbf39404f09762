/**
 * How much of a URL a message, a log line or a listing shows: `password` hides the password (`***`) and keeps the
 * rest; `credentials` drops the user and the password; `location` keeps only the scheme, host and path (no
 * credentials, no query string, no fragment: either may carry a token).
 */
export type UrlShown = 'password' | 'credentials' | 'location';

/** The one redactor of URLs: `url` as `shown` allows, or `fallback` when it is not a URL (never the text itself). */
export function redactUrl(url: string, shown: UrlShown, fallback: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return fallback;
  }
  if (shown === 'location') return `${u.protocol}//${u.host}${u.pathname}`;
  if (shown === 'credentials') u.username = '';
  if (u.password) u.password = shown === 'password' ? '***' : '';
  return u.toString();
}
