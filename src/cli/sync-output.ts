import type { TenantFailure } from '../app/run-sync.js';
import { codeOf, describeError, isStop, isUpstreamError } from '../errors.js';
import type { CollectionReport } from '../sync/sync-collection.js';
import type { TenantReport } from '../sync/sync-tenant.js';
import { redactUrl } from '../vocabulary/redact-url.js';
import { EXIT, exitCodeOf } from './exit-codes.js';
import { formatTable } from './format-table.js';

/** The base URL as shown in messages: without credentials, should it carry any. */
const shownUrl = (baseUrl: string): string => redactUrl(baseUrl, 'credentials', '(unparseable)').replace(/\/$/, '');

/** The origin of the base URL (scheme, host and port), without credentials or path. */
const originOf = (baseUrl: string): string => {
  try {
    return new URL(baseUrl).origin;
  } catch {
    return '(unparseable)';
  }
};

/**
 * One line saying why a tenant failed, with what the operator can fix: a refused key names the variable its
 * `apiKeyEnv` names (never the key) and says the slug may be wrong (the upstream refuses an unknown tenant the
 * same way); nothing readable names `baseUrl`; no answer at all names where it went and why.
 */
export function tenantFailureText(f: TenantFailure, baseUrl: string): string {
  // One full stop at the end of a sentence, whatever the upstream's message ended with.
  const what = describeError(f.error).replace(/\.+$/, '');
  switch (codeOf(f.error)) {
    case 'US_AUTH':
      return (
        `tenant ${f.slug}: the upstream refused the key in ${f.apiKeyEnv} (its apiKeyEnv): ${what}. Check the key ` +
        `${f.apiKeyEnv} holds, and the tenant slug "${f.slug}": the slug may be wrong, an unknown tenant is refused the same way`
      );
    case 'US_WRONG_BASE_URL':
      return `tenant ${f.slug}: baseUrl ${shownUrl(baseUrl)} ${what}; baseUrl should be the Partners API's origin, e.g. ${originOf(baseUrl)}`;
    case 'US_NOT_FOUND':
      return `tenant ${f.slug}: baseUrl ${shownUrl(baseUrl)}: ${what}`;
    default:
      if (isUpstreamError(f.error) && f.error.status === 0)
        return `tenant ${f.slug}: cannot reach the upstream (baseUrl ${shownUrl(baseUrl)}): ${what}`;
      return `tenant ${f.slug}: ${what}`;
  }
}

/**
 * What a run committed, page by page (pages commit with their checkpoint, so what was read is what is kept), for
 * Ctrl-C: `stopped: committed 412 records (harbour-opera: series 100, events 312); the next run resumes from there`.
 */
export class Committed {
  readonly #records = new Map<string, Map<string, number>>();

  /** `fetched`: the records of `collection` committed so far by this run. */
  note(tenant: string, collection: string, fetched: number): void {
    let byCollection = this.#records.get(tenant);
    if (!byCollection) {
      byCollection = new Map();
      this.#records.set(tenant, byCollection);
    }
    byCollection.set(collection, Math.max(fetched, byCollection.get(collection) ?? 0));
  }

  text(): string {
    let total = 0;
    const parts: string[] = [];
    for (const [tenant, byCollection] of this.#records) {
      const done = [...byCollection].filter(([, n]) => n > 0);
      total += done.reduce((sum, [, n]) => sum + n, 0);
      if (done.length > 0) parts.push(`${tenant}: ${done.map(([c, n]) => `${c} ${n}`).join(', ')}`);
    }
    return total === 0
      ? 'stopped: nothing was committed by this run (earlier runs stay committed); the next run starts where they ended'
      : `stopped: committed ${total} records (${parts.join('; ')}); the next run resumes from there`;
  }
}

/** A collection another live run held (skipped, or its lease lost to that run): try again later. */
const TEMPFAIL_CODES = new Set(['US_LOCKED', 'US_LEASE_LOST']);

/**
 * The run's exit code: the worst of its tenants' failures and its collections' errors; else 75 (EX_TEMPFAIL) when a
 * collection was held by another run (skipped as locked, or its lease lost); else 0.
 */
export function syncExitCode(reports: readonly TenantReport[], failures: readonly TenantFailure[]): number {
  let code: number = EXIT.OK;
  let tempfail = false;
  const note = (errorCode: string | undefined) => {
    if (errorCode !== undefined && TEMPFAIL_CODES.has(errorCode)) tempfail = true;
    else code = Math.max(code, exitCodeOf(errorCode));
  };
  for (const f of failures) note(codeOf(f.error));
  for (const t of reports) for (const c of t.collections) if (c.error || c.errorCode) note(c.errorCode);
  return code === EXIT.OK && tempfail ? EXIT.EX_TEMPFAIL : code;
}

const publicReport = (c: CollectionReport) => {
  const { errorCode: _code, ...rest } = c;
  return rest;
};

export function summaryTable(reports: TenantReport[]): string {
  const rows = reports.flatMap((t) =>
    t.collections.map((c) => ({
      tenant: t.slug,
      collection: c.name,
      fetched: c.fetched,
      inserted: c.inserted,
      updated: c.updated,
      unchanged: c.unchanged,
      deleted: c.deleted,
      requests: c.requests,
      ms: c.ms,
      note: c.error ? `error: ${c.error}` : c.skipped ? `skipped: ${c.skipped}` : '',
    })),
  );
  return formatTable(rows);
}

/** The line of a collection skipped because another run holds it: which, by whom, until when. */
const heldText = (tenant: string, c: CollectionReport): string =>
  `${tenant} ${c.name}: skipped: ` +
  (c.heldBy ? `held by ${c.heldBy.holder} until ${c.heldBy.until}` : 'held by another run') +
  ' (another run is syncing it; the next run takes it up, or pass --wait SECONDS to wait for it)';

/**
 * Prints what one run did: the JSON object (`--json`), else the summary table (not with `--quiet`); then one line
 * on stderr per failed tenant and per failed collection, and what a stopped run committed. Returns the exit code.
 */
export function reportRun(
  result: { reports: TenantReport[]; failures: readonly TenantFailure[]; committed: Committed },
  baseUrl: string,
  values: { json?: boolean; quiet?: boolean },
): number {
  const { reports, failures } = result;
  if (values.json) {
    const errorOf = (slug: string) => failures.find((f) => f.slug === slug && !isStop(f.error));
    process.stdout.write(
      `${JSON.stringify({
        tenants: reports.map((t) => {
          const failed = errorOf(t.slug);
          return {
            slug: t.slug,
            collections: t.collections.map(publicReport),
            ...(failed ? { error: tenantFailureText(failed, baseUrl) } : {}),
          };
        }),
      })}\n`,
    );
  } else if (!values.quiet) {
    process.stdout.write(`${summaryTable(reports)}\n`);
  }
  const say = (line: string) => process.stderr.write(`understudy sync: ${line}\n`);
  if (failures.some((f) => isStop(f.error))) say(result.committed.text());
  for (const f of failures) if (!isStop(f.error)) say(tenantFailureText(f, baseUrl));
  for (const t of reports) for (const c of t.collections) if (c.error) say(`${t.slug} ${c.name}: ${c.error}`);
  // A collection skipped because another run holds it: why, whatever --quiet says (the exit code alone is 75).
  for (const t of reports) for (const c of t.collections) if (c.errorCode === 'US_LOCKED') say(heldText(t.slug, c));
  return syncExitCode(reports, failures);
}
