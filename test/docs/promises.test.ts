import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

// What the docs promise a newcomer must be what was measured (issue 37, items 13 and 15).
const read = (f: string) => readFileSync(new URL(`../../${f}`, import.meta.url), 'utf8');
const oneLine = (s: string) => s.replace(/\s+/g, ' ');

describe('the promises the docs make', () => {
  it('README says what watch promises: seconds once a collection changes, the `all` target otherwise', () => {
    const readme = oneLine(read('README.md'));
    expect(readme).not.toMatch(/mirrors an upstream edit within seconds, a delete within minutes/);
    expect(readme).toMatch(/within seconds once a collection is changing/);
    expect(readme).toMatch(/within the `all` target otherwise \(2 minutes by default/);
  });

  it('docs/changes.md says an unpublish arrives through watch, not only with the next full pass', () => {
    const changes = oneLine(read('docs/changes.md'));
    expect(changes).toMatch(/With watch on .*an unpublish arrives like a delete/);
  });

  it('README says how long npm test takes, next to the command (issue 37, item 15)', () => {
    const readme = read('README.md');
    expect(readme).toMatch(/^npm test +# the test suite \(about \d+ minutes on 2 cores\)/m);
  });
});
