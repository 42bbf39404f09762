import { join } from 'node:path';
import { watchClearsFailureContract } from './watch-clears-failure-contract.js';

watchClearsFailureContract('SQLite', async (dir) => join(dir, 'm.db'));
