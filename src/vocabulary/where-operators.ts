/** The operators of the upstream's `where` (the spec's query language, as Payload reads it): one list for the
 * simulator, serve's reads and their tests. */
export const WHERE_OPERATORS = [
  'equals',
  'not_equals',
  'in',
  'not_in',
  'greater_than',
  'greater_than_equal',
  'less_than',
  'less_than_equal',
  'like',
  'contains',
  'exists',
] as const;
export type WhereOperator = (typeof WHERE_OPERATORS)[number];
