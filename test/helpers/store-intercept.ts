import type { Store, SyncKey, WriteBatch, WriteResult } from '../../src/sync/store-port.js';

/**
 * The store with each `write` going through `around`, which may run something first (a race made to happen),
 * wait, fail as a crash would, or call `write` to go on; every other method is the store's own.
 */
export function aroundWrites(
  store: Store,
  around: (batch: WriteBatch, write: () => Promise<WriteResult>, key: SyncKey) => Promise<WriteResult>,
): Store {
  return new Proxy(store, {
    get(target, prop) {
      if (prop === 'write')
        return (key: SyncKey, batch: WriteBatch) => around(batch, () => target.write(key, batch), key);
      const v = Reflect.get(target, prop);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}
