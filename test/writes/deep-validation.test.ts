import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { RESOURCE_SHAPES } from '../../src/partners/resource-fields.js';
import { FORBIDDEN_FIELDS, FORBIDDEN_ON } from '../../src/vocabulary/collections.js';
import { recordIdProblem } from '../../src/vocabulary/ids.js';
import { parseJobData, validateWrite } from '../../src/writes/validate-write.js';
import { CREATE_BODIES, closestName, MAX_BODY_DEPTH, UPDATE_BODIES } from '../../src/writes/write-bodies.js';

const patch = (body: unknown, id: unknown = '7') => ({
  op: 'patch',
  tenant: 'acme',
  collection: 'event-instances',
  id,
  body,
});
const create = (body: unknown) => ({ op: 'create', tenant: 'acme', collection: 'series', body });
/** `{ key: { a: { a: … 1 } } }`: `levels` objects deep, the body itself counted. */
const nestedBody = (key: string, levels: number): Record<string, unknown> => {
  let inner: unknown = 1;
  for (let i = 0; i < levels - 1; i++) inner = { a: inner };
  return { [key]: inner };
};

describe('deep validation at enqueue: the spec shapes at every depth', () => {
  it('refuses a misspelt nested field, naming its path and the field meant', async () => {
    await expect(validateWrite(patch({ booking: { bookingLinkLable: 'Book' } }), null)).rejects.toMatchObject({
      code: 'US_VALIDATION',
      message:
        'field "booking.bookingLinkLable" is not in the spec\'s event-instances resource shape: did you mean ' +
        '"bookingLinkLabel"? (set writes.allowExtraFields on tenant acme in the config to send fields the spec ' +
        'does not show)',
    });
    await expect(validateWrite(create({ titel: 'Winter' }), null)).rejects.toThrow(/"titel" .*did you mean "title"/);
    await expect(validateWrite(create({ title: 'x', meta: { canonicl: '/x' } }), null)).rejects.toThrow(
      /"meta.canonicl" .*did you mean "canonical"/,
    );
    await expect(validateWrite(patch({ ticketingA: { performanceID: '1' } }), null)).rejects.toThrow(
      /"ticketingA.performanceID" .*did you mean "performanceId"/,
    );
  });

  it('takes the right spelling, and nested objects whose shape the spec does not give', async () => {
    await expect(
      validateWrite(patch({ booking: { bookingLinkLabel: 'Book', bookingLinkURL: null } }), null),
    ).resolves.toMatchObject({ op: 'update', collection: 'event-instances', id: '7' });
    await expect(
      validateWrite(patch({ ticketingA: { keywords: { anything: { goes: [1] } } }, participants: [{ x: 1 }] }), null),
    ).resolves.toMatchObject({ op: 'update' });
  });

  it('refuses values of the wrong type, naming the field', async () => {
    await expect(validateWrite(create({ title: 42 }), null)).rejects.toThrow(/^field "title" of the series body: /);
    await expect(validateWrite(patch({ booking: { bookingLinkLabel: ['x'] } }), null)).rejects.toThrow(
      /field "booking.bookingLinkLabel"/,
    );
    await expect(validateWrite(create({ title: 'x', _status: 'live' }), null)).rejects.toThrow(/"_status"/);
  });

  it('opens unknown fields at every depth to a tenant with writes.allowExtraFields, and the worker takes them', async () => {
    const body = { booking: { bookingLinkLable: 'Book' }, extra: { deep: true } };
    const data = await validateWrite(patch(body), null, { allowExtraFields: true });
    expect(data).toMatchObject({ body });
    await expect(parseJobData(data)).resolves.toMatchObject({ body });
    // Types of the fields the spec does show are still checked.
    await expect(validateWrite(create({ title: 42 }), null, { allowExtraFields: true })).rejects.toThrow(/"title"/);
  });

  it('still names a forbidden field (spec rule 1) as such, not as unknown', async () => {
    await expect(validateWrite(create({ title: 'x', blocks: [] }), null, { allowExtraFields: true })).rejects.toThrow(
      /field "blocks" cannot be set by a create of series/,
    );
  });

  it('refuses an empty patch, with nothing to change', async () => {
    await expect(validateWrite(patch({}), null)).rejects.toMatchObject({
      code: 'US_VALIDATION',
      message: 'update of event-instances/7: the body is empty, so there is nothing to change',
    });
  });

  it(`refuses bodies nested more than ${MAX_BODY_DEPTH} levels deep, even with allowExtraFields`, async () => {
    const deep = nestedBody('extra', 2_000);
    await expect(validateWrite(patch(deep), null, { allowExtraFields: true })).rejects.toMatchObject({
      code: 'US_VALIDATION',
      message: `body is nested more than ${MAX_BODY_DEPTH} levels deep (at extra.a.a.a…)`,
    });
    await expect(parseJobData(patch(deep))).rejects.toThrow(/nested more than/);
    await expect(
      validateWrite(patch(nestedBody('extra', MAX_BODY_DEPTH)), null, { allowExtraFields: true }),
    ).resolves.toMatchObject({ op: 'update' });
    await expect(
      validateWrite(patch(nestedBody('extra', MAX_BODY_DEPTH + 1)), null, { allowExtraFields: true }),
    ).rejects.toThrow(/nested more than/);
  });
});

describe('record ids a write may address', () => {
  it.each([
    ['.', /dot segment/],
    ['..', /dot segment/],
    ['a/b', /holds \/ or \\/],
    ['a\\b', /holds \/ or \\/],
    [' 42', /whitespace/],
    ['42 ', /whitespace/],
    ['42\r', /control character/],
    ['4\t2', /control character/],
    ['4\u00852', /control character/],
  ])('refuses %j', async (id, why) => {
    expect(recordIdProblem(id)).toMatch(why);
    await expect(validateWrite(patch({ booking: { bookingLinkLabel: 'x' } }, id), null)).rejects.toMatchObject({
      code: 'US_VALIDATION',
      message: expect.stringMatching(new RegExp(`^id ${JSON.stringify(JSON.stringify(id)).slice(1, -1)}`)),
    });
    const bulk = { op: 'bulk', tenant: 'acme', collection: 'series', body: { ids: ['7', id], set: { a: 1 } } };
    await expect(validateWrite(bulk, null)).rejects.toThrow(/^bulk body: id /);
  });

  it('refuses an empty id as missing, and takes ordinary ids and numbers', async () => {
    await expect(validateWrite(patch({ booking: {} }, ''), null)).rejects.toThrow(/needs the id of the record/);
    for (const id of ['66a1f0c2e4b0a1b2c3d4e5f6', 42, 'poster.png', 'a.b', 'Ünïcode id'])
      expect(recordIdProblem(String(id)), String(id)).toBeNull();
    await expect(validateWrite(patch({ booking: { bookingLinkLabel: 'x' } }, 42), null)).resolves.toMatchObject({
      id: '42',
    });
  });
});

describe('the bodies of the write routes', () => {
  it('leave out exactly the fields spec rule 1 forbids on that route', () => {
    const keys = (s: { entries: object }) => Object.keys(s.entries);
    for (const [c, body] of Object.entries({ ...CREATE_BODIES, ...UPDATE_BODIES })) {
      const shape = RESOURCE_SHAPES[c as keyof typeof RESOURCE_SHAPES];
      const forbidden = (FORBIDDEN_ON[c as keyof typeof FORBIDDEN_ON] ?? []).length > 0;
      const missing = keys(shape).filter((k) => !keys(body).includes(k));
      const expected = forbidden ? keys(shape).filter((k) => (FORBIDDEN_FIELDS as readonly string[]).includes(k)) : [];
      expect(missing.sort(), c).toEqual(expected.sort());
    }
  });

  it('are strict objects (every field optional, nullable)', () => {
    for (const s of Object.values(RESOURCE_SHAPES)) expect(v.safeParse(s, {}).success).toBe(true);
    expect(v.safeParse(RESOURCE_SHAPES.series, { title: null }).success).toBe(true);
  });

  it('suggest a field only when it is close', () => {
    expect(closestName('bookingLinkLable', ['bookingLinkLabel', 'bookingLinkURL'])).toBe('bookingLinkLabel');
    expect(closestName('colour', ['title', 'slug', 'layout'])).toBeNull();
    expect(closestName('Title', ['title'])).toBe('title');
  });
});
