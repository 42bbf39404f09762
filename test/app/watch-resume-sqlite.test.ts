import { watchResumeContract } from './watch-resume-contract.js';

watchResumeContract('SQLite', async () => undefined);
