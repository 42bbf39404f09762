import { testDatabase } from '../helpers/postgres.js';
import { watchResumeContract } from './watch-resume-contract.js';

watchResumeContract('PostgreSQL', () => testDatabase());
