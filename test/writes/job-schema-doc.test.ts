import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { WRITABLE } from '../../src/writes/write-job.js';
import { writeJobJsonSchema } from '../../src/writes/write-job-schema.js';

/** The job-data JSON Schema block published in docs/writes.md, for apps using BullMQ's other clients. */
const blockFromDocs = (): string => {
  const md = readFileSync(new URL('../../docs/writes.md', import.meta.url), 'utf8');
  const section = md.slice(md.indexOf('### Job data'));
  const block = /```json\n([\s\S]*?)\n```/.exec(section)?.[1];
  if (!block) throw new Error('no JSON block under "### Job data" in docs/writes.md');
  return block;
};

describe('the job-data JSON Schema in docs/writes.md', () => {
  it('is exactly the schema generated from WriteJobSchema (regenerate: JSON.stringify(writeJobJsonSchema(), null, 2))', () => {
    expect(blockFromDocs()).toBe(JSON.stringify(writeJobJsonSchema(), null, 2));
  });

  it('lists exactly the collections each op has a route for', () => {
    const branches = writeJobJsonSchema().oneOf as {
      properties: { op: { const: string }; collection: { enum?: string[]; const?: string } };
    }[];
    const byOp = Object.fromEntries(
      branches.map((b) => [b.properties.op.const, b.properties.collection.enum ?? [b.properties.collection.const]]),
    );
    for (const op of ['create', 'update', 'delete', 'bulk'] as const) {
      expect([...(byOp[op] ?? [])].sort(), op).toEqual([...WRITABLE[op]].sort());
    }
  });
});
