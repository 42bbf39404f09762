import { type ParseArgsConfig, parseArgs } from 'node:util';
import { UsageError } from '../errors.js';

type Options = NonNullable<ParseArgsConfig['options']>;

/** `util.parseArgs` in strict mode, with its errors turned into `UsageError` (exit 2). */
export function parseFlags<O extends Options>(argv: string[], options: O, allowPositionals = false) {
  try {
    return parseArgs({ args: argv, options, allowPositionals, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message, { cause: err });
  }
}
