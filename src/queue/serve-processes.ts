import type { Redis } from 'ioredis';

/** Where serve processes say they are alive: a sorted set of `{host, pid, url, startedAt}` scored by the last beat. */
export const serveProcessesKey = (prefix: string): string => `${prefix}:serve:processes`;

/** A serve process that said it was alive lately, as `understudy status` lists it. */
export interface ServeProcess {
  readonly host: string;
  readonly pid: number;
  /** Where it listens, as it logged it at start (`http://127.0.0.1:8080`). */
  readonly url: string;
  /** When it started (ISO). */
  readonly startedAt: string;
  /** Its last heartbeat (ISO); it beats every 15 s. */
  readonly lastSeenAt: string;
}

/** A process not seen for this long is not listed: it stopped, or cannot reach Redis (it beats every 15 s). */
export const SERVE_SEEN_WITHIN_MS = 60_000;

/** The serve processes seen in the minute before `now`, most recently started first; unreadable members skipped. */
export async function recentServeProcesses(redis: Redis, prefix: string, now: number): Promise<ServeProcess[]> {
  const flat = await redis.zrangebyscore(serveProcessesKey(prefix), now - SERVE_SEEN_WITHIN_MS, '+inf', 'WITHSCORES');
  const out: ServeProcess[] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const member = memberOf(flat[i] ?? '');
    if (member) out.push({ ...member, lastSeenAt: new Date(Number(flat[i + 1])).toISOString() });
  }
  return out.sort((a, b) => b.startedAt.localeCompare(a.startedAt));
}

function memberOf(text: string): Omit<ServeProcess, 'lastSeenAt'> | null {
  try {
    const m = JSON.parse(text) as Partial<Record<keyof ServeProcess, unknown>>;
    if (typeof m.host !== 'string' || typeof m.pid !== 'number' || typeof m.url !== 'string') return null;
    if (typeof m.startedAt !== 'string') return null;
    return { host: m.host, pid: m.pid, url: m.url, startedAt: m.startedAt };
  } catch {
    return null;
  }
}
