import { createTestDatabase, pgQuery } from '../helpers/postgres.js';
import { changeLogContract } from './change-log-contract.js';

changeLogContract('PostgreSQL', async () => {
  const db = await createTestDatabase();
  return { database: db.url, query: (q, params) => pgQuery(db.url, q, params), drop: db.drop };
});
