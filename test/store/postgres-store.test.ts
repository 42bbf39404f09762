import { KyselyStore } from '../../src/store/kysely-store.js';
import { openMigratedEngine } from '../../src/store/open-engine.js';
import { createTestDatabase, pgQuery } from '../helpers/postgres.js';
import { normaliseRow, storeContract } from './store-contract.js';

storeContract('PostgreSQL', async () => {
  const db = await createTestDatabase();
  return {
    open: async (clock) => new KyselyStore(await openMigratedEngine(db.url), clock),
    query: async (q, params) => (await pgQuery(db.url, q, params)).map(normaliseRow),
    destroy: db.drop,
  };
});
