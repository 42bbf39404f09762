import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { nextBatch, webhookBody } from '../../src/changes/webhook-batch.js';
import { endpointsOf } from '../../src/changes/webhook-endpoints.js';
import { parseConfig } from '../../src/config/load-config.js';
import { openMirror } from '../../src/store/open-mirror.js';
import { PUBLISHED } from '../../src/sync/store-port.js';
import { tenantSlug } from '../../src/vocabulary/ids.js';
import { tempDir } from '../helpers/sync-harness.js';

const config = (hook: object) =>
  parseConfig({
    baseUrl: 'http://127.0.0.1:1',
    tenants: [
      { slug: 'acme', apiKeyEnv: 'K', webhooks: [{ url: 'http://127.0.0.1:2/hook', secretEnv: 'S', ...hook }] },
    ],
  });

describe('webhook endpoints and the reason of a delete', () => {
  it("carry a delete's reason in the payload, and select deletes by reason", async () => {
    const mirror = await openMirror(join(tempDir(), 'mirror.db'));
    onTestFinished(() => mirror.close());
    const key = { tenant: tenantSlug('acme'), collection: 'series' as const, variant: PUBLISHED };
    const at = (day: number) => new Date(Date.UTC(2026, 0, day)).toISOString();
    const docs = ['a', 'b', 'c'].map((id) => ({ id, updatedAt: at(1) }));
    await mirror.store.write(key, { upserts: docs, now: at(1) });
    await mirror.store.write(key, { deletes: ['a'], now: at(2) });
    await mirror.store.write(key, { upserts: [docs[1]!], seenBy: 'full-1', now: at(4) });
    await mirror.store.write(key, { tombstoneUnseen: { runId: 'full-1', startedAt: at(3), unpublished: ['c'] } });
    const batchOf = async (hook: object) => {
      const [endpoint] = endpointsOf(config(hook));
      if (!endpoint) throw new Error('no endpoint');
      const next = await nextBatch(mirror.changes, endpoint, 0, await mirror.changes.lastSeq(), at(9));
      return 'batch' in next ? next.batch : null;
    };
    const all = await batchOf({});
    const body = JSON.parse(webhookBody(all!)) as {
      data: { changes: { id: string; kind: string; reason: unknown }[] };
    };
    expect(body.data.changes.map((c) => [c.kind, c.id, c.reason])).toEqual([
      ['insert', 'a', null],
      ['insert', 'b', null],
      ['insert', 'c', null],
      ['delete', 'a', 'deleted'],
      ['delete', 'c', 'unpublished'],
    ]);
    const unpublished = await batchOf({ reasons: ['unpublished'] });
    expect(unpublished?.changes.map((c) => `${c.kind}:${c.id}`)).toEqual(['delete:c']);
    const allButUnpublish = await batchOf({ kinds: ['insert', 'delete'], reasons: ['deleted'] });
    expect(allButUnpublish?.changes.map((c) => `${c.kind}:${c.id}`)).toEqual([
      'insert:a',
      'insert:b',
      'insert:c',
      'delete:a',
    ]);
  });

  it('refuses a reason that is not one, and reasons with kinds that leave deletes out, naming the field', () => {
    expect(() => config({ reasons: ['moved'] })).toThrow(/webhooks\.0\.reasons/);
    expect(() => config({ kinds: ['insert'], reasons: ['deleted'] })).toThrow(
      'tenants.0.webhooks.0.reasons: reasons select deletes: kinds must then include "delete"',
    );
  });
});
