import { createApp } from '../app/create-app.js';
import { loadConfigFile } from '../config/load-config.js';
import { ConfigError, UsageError } from '../errors.js';
import { createWriteQueue } from '../queue/write-queue.js';
import { collectionNamed } from '../vocabulary/collections.js';
import { tenantSlug } from '../vocabulary/ids.js';
import { DEFAULT_MAX_BODY_BYTES, parseOp, parseWriteBody, WriteValidationError } from '../writes/validate-write.js';
import { printHelp } from './command-help.js';
import { parseFlags } from './parse-flags.js';
import { ENQUEUE_SPEC } from './specs/enqueue-spec.js';

/**
 * Reads stdin, giving up once it is past `limit` bytes: a body far over the cap is refused without holding it all.
 * (The cap itself is checked on the parsed body as compact JSON, by validation.)
 */
async function readStdin(limit: number, cap: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin) {
    size += (chunk as Buffer).length;
    if (size > limit)
      throw new WriteValidationError(
        `body is over ${limit} bytes, far over the cap of ${cap} (config writes.maxBodyBytes)`,
      );
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

async function readBody(flag: string | undefined, needed: boolean, cap: number): Promise<unknown> {
  let raw: string | undefined = flag;
  if (flag === undefined || flag === '-') {
    if (!needed) return undefined;
    if (flag === undefined && process.stdin.isTTY)
      throw new UsageError('--body JSON is required (or pipe it on stdin)');
    // Whitespace is not counted against the cap, so allow some before giving up on the raw text.
    raw = await readStdin(4 * cap, cap);
  }
  if (raw === undefined || raw.trim() === '') {
    if (!needed) return undefined;
    throw new UsageError('the body is empty: give --body JSON or pipe it on stdin');
  }
  return parseWriteBody(raw);
}

export async function enqueueCommand(argv: string[]): Promise<number> {
  const { values, help } = parseFlags(argv, ENQUEUE_SPEC);
  if (help) return printHelp(ENQUEUE_SPEC, help);
  const config = loadConfigFile(values.config);
  const tenant = values.tenant;
  if (!config.tenants.some((t) => t.slug === tenant)) {
    throw new ConfigError(
      `--tenant ${tenant}: not a tenant of the config (${config.tenants.map((t) => t.slug).join(', ')})`,
    );
  }
  const op = parseOp(values.op);
  const maxBodyBytes = config.writes?.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const body = await readBody(values.body, op !== 'delete', maxBodyBytes);
  const request = {
    op,
    tenant,
    collection: values.collection,
    ...(values.id !== undefined ? { id: values.id } : {}),
    ...(body !== undefined ? { body } : {}),
    ...(values.draft ? { draft: true } : {}),
    ...(values['idempotency-key'] !== undefined ? { idempotencyKey: values['idempotency-key'] } : {}),
  };
  // enqueue() validates before it sends anything to Redis, so a refused write leaves no trace there.
  await using app = await createApp(config, process.env, { profile: 'queue' });
  const queue = await createWriteQueue({
    connection: app.redis,
    prefix: app.redisSettings.prefix,
    // Bulk writes are checked against the mirrored theme-settings schema and custom-attribute definitions,
    // read-only (no mirror yet: no schema, refused; no definitions, queued with a warning).
    themeSchema: async (t, c) => (await app.mirror())?.getThemeSchema(tenantSlug(t), c) ?? null,
    customAttributes: async (t) => (await app.mirror())?.customAttributes(tenantSlug(t)) ?? null,
    config,
    // The one line of a warning, as every command prints one: the write is queued, and waits for a worker.
    onWarning: (w) => process.stderr.write(`understudy enqueue: warning: ${w.message}\n`),
  });
  try {
    const jobId = await queue.enqueue(request);
    // The collection as queued: its API path, whichever name was given.
    const collection = collectionNamed(request.collection) ?? request.collection;
    if (values.json) process.stdout.write(`${JSON.stringify({ jobId, op, tenant, collection })}\n`);
    else if (!values.quiet) process.stdout.write(`${jobId}\n`);
    return 0;
  } finally {
    await queue.close().catch(() => undefined);
  }
}
