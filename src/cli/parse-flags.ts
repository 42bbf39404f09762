import { type ParseArgsConfig, parseArgs } from 'node:util';
import { UsageError } from '../errors.js';

type Options = NonNullable<ParseArgsConfig['options']>;
export type ParsedFlags<O extends Options> = ReturnType<
  typeof parseArgs<{ args: string[]; options: O; allowPositionals: boolean; strict: true }>
>;

/** `util.parseArgs` in strict mode, with its errors turned into `UsageError` (exit 2). */
export function parseFlags<O extends Options>(argv: string[], options: O, allowPositionals = false): ParsedFlags<O> {
  try {
    return parseArgs({ args: argv, options, allowPositionals, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message, { cause: err });
  }
}
