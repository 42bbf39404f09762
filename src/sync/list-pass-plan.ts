import { randomUUID } from 'node:crypto';
import type { ListQuery } from '../partners/partners-client.js';
import { overlapIsComplete } from './overlap-window.js';
import { afterWhere, comparePositions, EPOCH, sinceWhere } from './position.js';
import type { Position, SyncKey, SyncState } from './store-port.js';
import type { Run, SyncMode } from './sync-run.js';
import type { VariantSpec } from './variants.js';

/** A full pass: its run id and start (rows written since that start are not its to delete). */
export interface FullPass {
  readonly runId: string;
  readonly startedAt: string;
}

/** Where a pass over a list route starts: its state, whether it reads in full, and the first page's filter. */
export interface PassPlan {
  readonly state: SyncState;
  readonly full: boolean;
  /** The full pass this one is (new or resumed); null for an incremental pass. */
  readonly pass: FullPass | null;
  /** The position the first page starts after; null from the start (or from the overlap window). */
  readonly after: Position | null;
  readonly where: ListQuery['where'];
}

/** A full pass: a new one (its start saved at once), or the one a crash interrupted, from its last page. */
async function planFull(run: Run, key: SyncKey, keyField: string, saved: SyncState): Promise<PassPlan> {
  // A pass resumed after a crash keeps its run id and start: rows written since that start stay not its to delete.
  let pass: FullPass | null = saved.full ? { runId: saved.full.runId, startedAt: saved.full.startedAt } : null;
  const after = saved.full?.after ?? null;
  let state = saved;
  if (!pass) {
    pass = { runId: randomUUID(), startedAt: run.now() };
    state = { ...state, full: { ...pass, after: null }, incremental: null };
    await run.saveState(key, state);
  }
  return { state, full: true, pass, after, where: after ? afterWhere(after, keyField) : undefined };
}

/** An incremental pass from the cursor: right after it when the overlap window is complete, else re-reading it. */
async function planIncremental(
  run: Run,
  spec: VariantSpec,
  key: SyncKey,
  keyField: string,
  saved: SyncState,
): Promise<PassPlan> {
  const cursor = saved.cursor ?? EPOCH;
  const after = (await overlapIsComplete(run, spec, key, cursor)) ? cursor : null;
  const overlap = run.deps.overlapMs ?? 1000;
  const where = after
    ? afterWhere(after, keyField)
    : sinceWhere(new Date(Math.max(0, Date.parse(cursor.updatedAt) - overlap)).toISOString());
  return { state: { ...saved, incremental: { after } }, full: false, pass: null, after, where };
}

/**
 * Where a pass over a list route starts, from the saved sync state: in full (asked for, never synced, a full pass
 * to resume, or a cursor past now), right after an interrupted incremental run's last page, or from the cursor.
 */
export async function planPass(
  run: Run,
  spec: VariantSpec,
  mode: SyncMode,
  key: SyncKey,
  keyField: string,
  ceiling: Position,
): Promise<PassPlan> {
  const state = await run.deps.store.getSyncState(key);
  // A cursor already past now (left by a record dated in the future) cannot say what was missed: read it all again.
  const broken = state.cursor !== null && Date.parse(state.cursor.updatedAt) > run.futureAfter;
  if (broken && mode === 'incremental' && !state.full)
    run.deps.log.warn(
      { variant: spec.variant, cursor: state.cursor },
      'cursor is past now; this run reads the collection in full',
    );
  const full = mode === 'full' || state.cursor === null || state.full !== null || broken;
  if (full) return planFull(run, key, keyField, state);
  const resumable = state.incremental?.after ?? null;
  if (resumable && state.cursor && comparePositions(resumable, ceiling) <= 0) {
    // An interrupted incremental run: go on right after its last committed page, without the overlap re-read
    // (that re-read would fetch every committed page of a burst of edits sharing one second again). Not from a
    // position past this run's start (a record dated in the future): edits made since would sort before it.
    return { state, full: false, pass: null, after: resumable, where: afterWhere(resumable, keyField) };
  }
  return planIncremental(run, spec, key, keyField, state);
}
