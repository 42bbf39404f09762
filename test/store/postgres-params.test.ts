import { describe, expect, it } from 'vitest';
import { positionalParams } from '../../src/store/postgres/postgres-query.js';

describe('named placeholders on PostgreSQL', () => {
  it('numbers the bound names, once each, and leaves casts, strings, comments and operators alone', () => {
    const sql = `SELECT :tenant::text, doc @> '{"a":1}', ':tenant', "x:tenant", $q$ :tenant $q$ -- :tenant
      /* @tenant */ FROM t WHERE tenant = @tenant AND id = $id AND y = :other AND z = :tenant`;
    expect(positionalParams(sql, { tenant: 'acme', id: '7' })).toEqual({
      text: `SELECT $1::text, doc @> '{"a":1}', ':tenant', "x:tenant", $q$ :tenant $q$ -- :tenant
      /* @tenant */ FROM t WHERE tenant = $1 AND id = $2 AND y = :other AND z = $1`,
      values: ['acme', '7'],
    });
  });

  it('keeps an escaped quote inside a string literal', () => {
    expect(positionalParams(`SELECT 'it''s :a', :a`, { a: 'x' })).toEqual({
      text: `SELECT 'it''s :a', $1`,
      values: ['x'],
    });
  });
});
