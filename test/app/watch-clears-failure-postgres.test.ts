import { testDatabase } from '../helpers/postgres.js';
import { watchClearsFailureContract } from './watch-clears-failure-contract.js';

watchClearsFailureContract('PostgreSQL', () => testDatabase());
