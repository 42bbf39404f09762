import { openStore } from '../../src/store/open-mirror.js';
import { createTestDatabase, pgQuery } from '../helpers/postgres.js';
import { normaliseRow, storeContract } from './store-contract.js';

storeContract('PostgreSQL', async () => {
  const db = await createTestDatabase();
  return {
    open: (clock) => openStore(db.url, clock),
    query: async (q, params) => (await pgQuery(db.url, q, params)).map(normaliseRow),
    destroy: db.drop,
  };
});
