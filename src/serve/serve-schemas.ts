import * as v from 'valibot';
import type { Change } from '../changes/change-log-port.js';
import type { FailedWrite, RetryResult, WriteDetails } from '../queue/failed-writes.js';
import { TENANT_SLUG } from '../vocabulary/ids.js';
import type { BulkFailure, WriteLogEntry } from '../writes/write-log.js';
import { WRITE_STATUSES } from '../writes/write-log.js';
import type { BulkSummary, WriteFailure, WriteState, WriteStateName } from '../writes/write-state.js';

/**
 * What `understudy serve` answers, as valibot schemas: the OpenAPI document (`serveOpenApi`) is generated from these
 * and from the write bodies' own schemas, and the answers are built as their output types. Where the value is made
 * elsewhere (a write's state, a change), the compiler checks that the interface and the schema say the same.
 */

const nullable = <T extends v.GenericSchema>(s: T) => v.nullable(s);
const text = nullable(v.string());
const count = v.pipe(v.number(), v.safeInteger(), v.minValue(0));

/** An RFC 9457 problem: every error serve answers, as `application/problem+json`. Extension members may follow. */
export const ProblemSchema = v.pipe(
  v.object({
    type: v.pipe(
      v.string(),
      v.description('A URI naming the kind of problem (`about:blank` when only the status does)'),
    ),
    title: v.pipe(v.string(), v.description('The HTTP status phrase or a short summary, the same for every instance')),
    status: v.pipe(v.number(), v.safeInteger(), v.minValue(400), v.maxValue(599)),
    detail: v.pipe(v.string(), v.description('What went wrong with this request, in one line')),
    code: v.pipe(
      v.string(),
      v.regex(/^US_[A-Z0-9_]+$/),
      v.description("understudy's error code (docs/errors.md): match on it rather than on the text"),
    ),
  }),
  v.title('Problem'),
);
export type Problem = v.InferOutput<typeof ProblemSchema>;

const WRITE_STATE_NAMES = ['queued', 'running', 'retrying', 'ok', 'partial', 'failed'] as const;
export const WriteStateNameSchema = v.pipe(
  v.picklist(WRITE_STATE_NAMES),
  v.description('queued, running, retrying, then one of the outcomes ok, partial (a bulk write) or failed'),
);

/** The answer to a write that was queued (202), or whose `Idempotency-Key` was seen before (200). */
export const AcceptedWriteSchema = v.object({
  id: v.pipe(v.string(), v.description('The write job id')),
  state: WriteStateNameSchema,
  links: v.object({ self: v.pipe(v.string(), v.description('`/v1/writes/{id}`: where to follow it')) }),
});
export type AcceptedWrite = v.InferOutput<typeof AcceptedWriteSchema>;

export const WriteFailureSchema = v.object({ code: text, status: nullable(v.number()), message: v.string() });
export const BulkFailureSchema = v.object({ id: v.string(), status: nullable(v.number()), message: v.string() });
const bulkFailures = nullable(v.pipe(v.array(BulkFailureSchema), v.readonly()));

export const BulkSummarySchema = v.object({
  dryRun: v.exactOptional(v.boolean()),
  versionTarget: v.exactOptional(v.string()),
  matched: v.exactOptional(count),
  updated: v.exactOptional(count),
  wouldUpdate: v.exactOptional(count),
  unchanged: v.exactOptional(count),
  failed: v.exactOptional(count),
});

const tokenName = v.pipe(
  nullable(v.string()),
  v.description('The name of the API token that enqueued the write (null when it came another way)'),
);

/** A write's state, as `getWrite` gives it (`writes show`). */
export const WriteStateSchema = v.object({
  jobId: v.string(),
  state: WriteStateNameSchema,
  done: v.boolean(),
  op: text,
  tenant: text,
  collection: text,
  recordId: text,
  resultId: text,
  note: text,
  attempts: count,
  error: nullable(WriteFailureSchema),
  failures: bulkFailures,
  summary: nullable(BulkSummarySchema),
  tokenName,
  enqueuedAt: text,
  finishedAt: text,
});

/** One `write_log` row. */
export const WriteLogEntrySchema = v.object({
  jobId: v.string(),
  tenant: v.string(),
  op: v.string(),
  collection: v.string(),
  recordId: text,
  method: text,
  draft: v.boolean(),
  idempotencyKey: text,
  status: v.picklist(WRITE_STATUSES),
  attempts: count,
  error: text,
  errorCode: text,
  upstreamStatus: nullable(v.number()),
  failures: bulkFailures,
  resultId: text,
  note: text,
  enqueuedAt: text,
  startedAt: text,
  finishedAt: text,
  waitMs: nullable(v.number()),
  runMs: nullable(v.number()),
  updatedAt: v.string(),
});

/** Everything known about one write (`writes show --json`), and the token that enqueued it. */
export const WriteDetailsSchema = v.object({
  ...WriteStateSchema.entries,
  queueState: v.string(),
  data: v.unknown(),
  progress: v.unknown(),
  failedReason: text,
  result: v.unknown(),
  log: nullable(WriteLogEntrySchema),
  advice: v.exactOptional(v.string()),
});
/** What `GET /v1/writes/{id}` answers: a write's details and the record it left in the mirror once it ended ok. */
export const WriteAnswerSchema = v.object({
  ...WriteDetailsSchema.entries,
  record: v.pipe(
    nullable(v.record(v.string(), v.unknown())),
    v.description(
      'The record as the mirror holds it after the write (its draft for a draft write); null before the write ended ok, for a bulk write, or when the mirror does not hold it',
    ),
  ),
});
export type ServeWriteDetails = v.InferOutput<typeof WriteAnswerSchema>;

/** A write that did not fully succeed (`writes failed`), and the token that enqueued it. */
export const FailedWriteSchema = v.object({
  jobId: v.string(),
  status: v.picklist(['failed', 'partial']),
  tenant: v.string(),
  op: v.string(),
  collection: v.string(),
  recordId: text,
  attempts: count,
  reason: v.string(),
  code: text,
  retryable: v.boolean(),
  failedAt: text,
  failures: bulkFailures,
  tokenName,
});
export type ServeFailedWrite = v.InferOutput<typeof FailedWriteSchema>;

/** What `POST /v1/writes/{id}/retry` did (`writes retry`). */
export const RetryResultSchema = v.object({
  jobId: v.string(),
  how: v.picklist(['requeued', 'replayed']),
  runs: v.pipe(v.string(), v.description('The job that will run: the same id when requeued, a new one when replayed')),
});

/** One change of the feed, as `understudy changes --json` prints it. */
export const ChangeSchema = v.object({
  seq: v.pipe(v.number(), v.safeInteger(), v.minValue(1)),
  tenant: v.pipe(v.string(), v.regex(TENANT_SLUG)),
  collection: v.string(),
  id: v.string(),
  variant: v.string(),
  kind: v.picklist(['insert', 'update', 'revive', 'delete']),
  updated_at_before: text,
  updated_at_after: text,
  fields: v.pipe(v.array(v.string()), v.readonly()),
  source: nullable(v.picklist(['sync', 'write'])),
  run_id: text,
  at: v.string(),
  reason: nullable(v.picklist(['deleted', 'unpublished'])),
});

// The interfaces the values are made as and the schemas above describe the same data: the compiler checks both
// directions (readonly aside, which assignability ignores).
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const _same: [
  Same<v.InferOutput<typeof WriteStateNameSchema>, WriteStateName>,
  Same<v.InferOutput<typeof WriteFailureSchema>, WriteFailure>,
  Same<v.InferOutput<typeof BulkFailureSchema>, BulkFailure>,
  Same<v.InferOutput<typeof BulkSummarySchema>, BulkSummary>,
  Same<v.InferOutput<typeof WriteStateSchema>, WriteState>,
  Same<v.InferOutput<typeof WriteLogEntrySchema>, WriteLogEntry>,
  Same<v.InferOutput<typeof WriteDetailsSchema>, WriteDetails>,
  Same<v.InferOutput<typeof FailedWriteSchema>, FailedWrite>,
  Same<v.InferOutput<typeof RetryResultSchema>, RetryResult>,
  Same<v.InferOutput<typeof ChangeSchema>, Change>,
] = [true, true, true, true, true, true, true, true, true, true];
void _same;

/** The query of `GET /v1/writes`: failed (and partial) writes, of one tenant or all the token may see. */
export const FailedWritesQuerySchema = v.object({
  state: v.exactOptional(v.picklist(['failed'])),
  tenant: v.exactOptional(v.pipe(v.string(), v.regex(TENANT_SLUG))),
});
