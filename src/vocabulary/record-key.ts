import type { CollectionSlug } from './collections.js';
import { recordId, type UpstreamDoc } from './ids.js';

/**
 * The key a record is stored under: its `id` (numbers normalised to strings), or for media, which the spec shows
 * without an id, its `filename`. Null when the record has neither.
 */
export function docKey(collection: CollectionSlug, doc: UpstreamDoc): string | null {
  const id = doc.id;
  if (typeof id === 'string' && id !== '') return id;
  if ((typeof id === 'number' && Number.isFinite(id)) || typeof id === 'bigint') return recordId(id);
  if (collection === 'media') {
    const filename = doc.filename;
    if (typeof filename === 'string' && filename !== '') return filename;
  }
  return null;
}
