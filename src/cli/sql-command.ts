import { UsageError } from '../errors.js';

/** Placeholder until the command lands. */
export async function sqlCommand(_argv: string[]): Promise<number> {
  throw new UsageError('sql is not built yet');
}
