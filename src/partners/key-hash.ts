import { createHash } from 'node:crypto';

/**
 * A stable, non-reversible name for an API key: the first 16 hex characters of its SHA-256.
 * Used for Redis keys and metric labels, so the key itself never leaves the process.
 */
export function keyHash(apiKey: string): string {
  return createHash('sha256').update(apiKey, 'utf8').digest('hex').slice(0, 16);
}
