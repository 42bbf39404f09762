import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { WRITABLE } from '../../src/writes/write-job.js';
import { formatJson, writeJobJsonSchema } from '../../src/writes/write-job-schema.js';

/** The job-data JSON Schema block published in docs/writes.md, for apps using BullMQ's other clients. */
const blockFromDocs = (): string => {
  const md = readFileSync(new URL('../../docs/writes.md', import.meta.url), 'utf8');
  const section = md.slice(md.indexOf('### Job data'));
  const block = /```json\n([\s\S]*?)\n```/.exec(section)?.[1];
  if (!block) throw new Error('no JSON block under "### Job data" in docs/writes.md');
  return block;
};

describe('the job-data JSON Schema in docs/writes.md', () => {
  it('is exactly the schema generated from WriteJobSchema (regenerate: formatJson(writeJobJsonSchema()))', () => {
    expect(blockFromDocs()).toBe(formatJson(writeJobJsonSchema()));
    expect(JSON.parse(blockFromDocs())).toEqual(writeJobJsonSchema());
  });

  it('lists exactly the collections each op has a route for', () => {
    interface Branch {
      readonly oneOf?: Branch[];
      readonly properties?: { op: { const: string }; collection: { const: string } };
    }
    // One branch per op and collection, grouped by op.
    const branches = (writeJobJsonSchema().oneOf as Branch[]).flatMap((b) => b.oneOf ?? [b]);
    const byOp: Record<string, string[]> = {};
    for (const { properties: p } of branches) {
      if (p) byOp[p.op.const] = [...(byOp[p.op.const] ?? []), p.collection.const];
    }
    for (const op of ['create', 'update', 'delete', 'bulk'] as const) {
      expect([...(byOp[op] ?? [])].sort(), op).toEqual([...WRITABLE[op]].sort());
    }
  });
});

describe('the bodies in the job JSON Schema', () => {
  it("carry the nested shapes of the spec, strict, with bookingLinkLabel under an event instance's booking", () => {
    const defs = writeJobJsonSchema().$defs as Record<string, { properties: Record<string, unknown> }>;
    const booking = JSON.stringify(defs.eventInstances?.properties.booking);
    expect(booking).toContain('"bookingLinkLabel"');
    expect(booking).toContain('"additionalProperties":false');
    expect(Object.keys(defs.seriesCreate?.properties ?? {})).not.toContain('blocks');
  });
});
