import { defaultExclude, defineConfig } from 'vitest/config';

/**
 * Files that wait for most of their run: a worker watching a simulator with its real limits, measured over whole
 * minutes or past a lease's expiry (a few seconds of CPU in a minute or more each). They run in a lane of their own,
 * two at a time, beside the two forks that run every other file, instead of holding one of those two forks idle for
 * ten minutes in all. A file belongs here only when its wall time is mostly sleep, by design.
 */
const WAITING = [
  'test/app/watch-reload.test.ts',
  'test/app/watch-process.test.ts',
  'test/app/watch-exact.test.ts',
  'test/app/watch-handover.test.ts',
  'test/app/watch-resume-sqlite.test.ts',
  'test/app/watch-resume-postgres.test.ts',
];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    reporters: ['default'],
    // Two pools run at once: the waiting lane in worker threads, the rest in child processes.
    poolOptions: {
      forks: { maxForks: 2, minForks: 1 },
      threads: { maxThreads: 2, minThreads: 1 },
    },
    projects: [
      { extends: true, test: { name: 'waiting', include: WAITING, pool: 'threads' } },
      {
        extends: true,
        test: { name: 'main', include: ['test/**/*.test.ts'], exclude: [...defaultExclude, ...WAITING], pool: 'forks' },
      },
    ],
  },
});
