import { UsageError } from '../errors.js';

/** Placeholder until the command lands. */
export async function simCommand(_argv: string[]): Promise<number> {
  throw new UsageError('sim is not built yet');
}
