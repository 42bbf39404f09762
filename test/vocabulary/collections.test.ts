import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load-config.js';
import { checkSyncJobRequest } from '../../src/queue/enqueue-sync.js';
import { COLLECTIONS, collectionNamed, tableFor } from '../../src/vocabulary/collections.js';
import { validateWrite } from '../../src/writes/validate-write.js';

describe('a collection named by its API path or its table', () => {
  it('means the same collection either way, and nothing else', () => {
    for (const c of COLLECTIONS) {
      expect(collectionNamed(c)).toBe(c);
      expect(collectionNamed(tableFor(c))).toBe(c);
    }
    expect(collectionNamed('event_instance')).toBeUndefined();
    expect(collectionNamed('Events')).toBeUndefined();
  });

  it('is read as the API path in a config, a write and a queued sync', async () => {
    const config = parseConfig({
      baseUrl: 'http://127.0.0.1:9',
      tenants: [
        {
          slug: 'alpha',
          apiKeyEnv: 'K',
          collections: ['event_instances', 'custom_attributes', 'events'],
          webhooks: [{ url: 'http://127.0.0.1:9/h', secretEnv: 'S', collections: ['event_instances'] }],
        },
      ],
    });
    expect(config.tenants[0]?.collections).toEqual(['event-instances', 'custom-attributes', 'events']);
    expect(config.tenants[0]?.webhooks?.[0]?.collections).toEqual(['event-instances']);
    expect(() =>
      parseConfig({ baseUrl: 'http://x', tenants: [{ slug: 'a', apiKeyEnv: 'K', collections: ['event_instance'] }] }),
    ).toThrow(/tenants\.0\.collections\.0: "event_instance" is not one of .*did you mean "event_instances"/);

    const write = await validateWrite(
      { op: 'delete', tenant: 'alpha', collection: 'event_instances', id: '65f0' },
      'skip',
      'skip',
    );
    expect(write).toMatchObject({ op: 'delete', collection: 'event-instances', id: '65f0' });
    await expect(
      validateWrite({ op: 'delete', tenant: 'alpha', collection: 'event_instance', id: '65f0' }, 'skip', 'skip'),
    ).rejects.toMatchObject({ code: 'US_VALIDATION' });

    const sync = checkSyncJobRequest({ tenant: 'alpha', mode: 'full', collections: ['event_instances', 'events'] });
    expect(sync.collections).toEqual(['event-instances', 'events']);
    expect(() => checkSyncJobRequest({ tenant: 'alpha', mode: 'full', collections: ['nope' as never] })).toThrow(
      /collections: not a collection: nope/,
    );
  });
});
