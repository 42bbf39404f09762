import { UsageError } from '../errors.js';

/** Placeholder until the command lands. */
export async function syncCommand(_argv: string[]): Promise<number> {
  throw new UsageError('sync is not built yet');
}
