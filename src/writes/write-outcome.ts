import type { Logger } from '../log.js';
import type { PartnersClient } from '../partners/partners-client.js';
import type { Store } from '../sync/store-port.js';
import type { CollectionSlug } from '../vocabulary/collections.js';
import type { JsonObject } from '../vocabulary/ids.js';
import type { BulkFailure } from './write-log.js';

/** What applying a write needs: the tenant's client, the mirror, and how to bring the mirror up after a bulk write. */
export interface WriteDeps {
  readonly client: PartnersClient;
  readonly store: Store;
  readonly log: Logger;
  /** Whether the tenant mirrors drafts; draft results are written through only then. */
  readonly mirrorDrafts: boolean;
  /** Brings the mirror of a collection up to date after a bulk write (an incremental sync, inline or queued). */
  readonly afterBulk?: (collection: CollectionSlug, signal: AbortSignal) => Promise<void>;
  readonly now?: () => Date;
}

export interface ApplyOptions {
  readonly signal: AbortSignal;
  /** An earlier attempt went out without a usable answer: a create looks for its record before sending again. */
  readonly priorUnknown: boolean;
  /** The write job's id, logged as the `run_id` of the changes its write-through makes. */
  readonly jobId?: string;
  /** Where a sequence of requests keeps what its next attempt needs, should this one be cut off (a job's progress). */
  readonly checkpoint?: SequenceCheckpoint;
}

/** What a write of several requests saves before its first write, for the attempt after one cut off midway. */
export interface SequenceCheckpoint {
  /** What an earlier attempt of this write saved, or null. */
  readonly saved: JsonObject | null;
  /** Saves `state` with the job; resolves once it is stored (the first write waits for it). */
  save(state: JsonObject): Promise<void>;
}

/** How a write ended upstream and in the mirror. */
export type WriteOutcome =
  | {
      readonly status: 'ok';
      /** The id of the record written, when there is one. */
      readonly resultId: string | null;
      /** Set when the write ended another way than by its own answer, e.g. found after an unknown outcome. */
      readonly note?: string;
      /** Why the mirror could not be brought in step (the write itself succeeded). */
      readonly mirrorError?: string;
      readonly summary?: JsonObject;
    }
  | {
      readonly status: 'partial';
      readonly resultId: null;
      readonly failures: readonly BulkFailure[];
      readonly summary: JsonObject;
      readonly mirrorError?: string;
    };

/** The outcome with the mirror's failure, when there was one. */
export function withMirror<T extends WriteOutcome>(outcome: T, mirrorError: string | undefined): T {
  return mirrorError === undefined ? outcome : { ...outcome, mirrorError };
}
