import { DelayedError, type Job, UnrecoverableError } from 'bullmq';
import { type RunWriteDeps, runWrite, type WriteJobResult } from '../src/writes/run-write.js';
import type { WriteProgress } from '../src/writes/write-progress.js';

export type { WriteJobResult, WriteTenant } from '../src/writes/run-write.js';
export { ALREADY_APPLIED } from '../src/writes/run-write.js';
export type { WriteProgress } from '../src/writes/write-progress.js';

/** What the write processor needs (see `RunWriteDeps`: the record line, the write log, the retry policy). */
export type WriteProcessorDeps = RunWriteDeps;

/**
 * The write processor: `runWrite` decides, this maps the decision to BullMQ. A delay moves the job to delayed
 * (`DelayedError`: no BullMQ attempt spent; the write counts its own attempts in the job's progress); a failure is
 * final (`UnrecoverableError`); a completed write returns its result.
 */
export const applyWriteProcessor =
  (deps: WriteProcessorDeps) =>
  async (job: Job, token?: string, signal?: AbortSignal): Promise<WriteJobResult> => {
    const now = deps.now ?? Date.now;
    const decision = await runWrite(
      deps,
      {
        id: job.id ?? '?',
        timestamp: job.timestamp,
        data: job.data,
        progress: job.progress,
        saveProgress: (p: WriteProgress) => job.updateProgress(p),
      },
      signal,
    );
    switch (decision.kind) {
      case 'complete':
        return decision.result;
      case 'delay':
        await job.moveToDelayed(now() + Math.max(0, Math.round(decision.delayMs)), token);
        throw new DelayedError();
      case 'fail':
        throw new UnrecoverableError(decision.message);
    }
  };
