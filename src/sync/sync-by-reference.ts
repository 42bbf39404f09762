import { randomUUID } from 'node:crypto';
import { hasCode } from '../errors.js';
import { type RecordId, recordId, type UpstreamDoc } from '../vocabulary/ids.js';
import { edgesTo, refId, refValues } from './references.js';
import { PUBLISHED, type SyncState } from './store-port.js';
import { finishPass, type Run, type SyncMode } from './sync-run.js';
import type { VariantSpec } from './variants.js';

/** Ids of `collection` that mirrored records of other collections point at. */
async function referencedIds(run: Run): Promise<Set<string>> {
  const ids = new Set<string>();
  for (const edge of edgesTo(run.collection)) {
    await run.deps.store.scanDocs({ tenant: run.tenant, collection: edge.from, variant: PUBLISHED }, (doc) => {
      for (const v of refValues(doc, edge)) {
        const id = refId(v);
        if (id !== null) ids.add(id);
      }
    });
  }
  return ids;
}

/** Fetches by id every record other collections reference (in incremental mode, only those not yet mirrored). */
export async function syncByReference(run: Run, spec: VariantSpec, mode: SyncMode): Promise<void> {
  const { store, client } = run.deps;
  const key = run.key(spec.variant);
  const state = await store.getSyncState(key);
  const full = mode === 'full' || state.cursor === null;
  let ids = await referencedIds(run);
  if (!full) {
    const live = await store.liveIds(key);
    ids = new Set([...ids].filter((id) => !live.has(id)));
  }
  const pass = full ? (state.full ?? { runId: randomUUID(), startedAt: run.now(), after: null }) : null;
  const running: SyncState = { ...state, full: pass };
  if (pass && !state.full) await run.saveState(key, running);
  for (const id of ids) {
    run.checkStop();
    let doc: UpstreamDoc;
    const fetchedAt = run.now();
    try {
      doc = await client.getById(run.collection, recordId(id) as RecordId, { ...spec.query, depth: 0 }, run.opts);
    } catch (err) {
      if (hasCode(err, 'US_NOT_FOUND')) continue; // referenced but gone: not mirrored
      throw err;
    }
    run.counted(
      await run.commit(key, { upserts: [doc], fetchedAt, next: running, ...(pass ? { seenBy: pass.runId } : {}) }),
      1,
    );
  }
  await finishPass(run, key, running, running.cursor, pass ? { runId: pass.runId, startedAt: pass.startedAt } : null);
}
