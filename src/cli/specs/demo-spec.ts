import { defineCommand } from '../parse-flags.js';

export const DEMO_SPEC = defineCommand({
  name: 'demo',
  summary: 'mirror the bundled simulator into a temporary file and query it',
  about:
    'The main job end to end on embedded defaults (what `npm run demo` runs): starts the bundled Partners API ' +
    'simulator with its programme placed around today (seed 7: the same data all day), mirrors both of its tenants ' +
    'into a fresh SQLite file in a temporary folder with `understudy sync`, shows the upcoming performances with ' +
    'understudy sql and a full-text `understudy search`, then prints next steps to try. The mirror is kept (its ' +
    'path is printed; remove the folder when done). No Redis, no network beyond loopback. Exits with the code of ' +
    'the sync (or of a query).',
  flags: {},
});
