/** `npm run schemas`: rewrites the generated part of docs/schema.md from the schema catalog. */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { withSchemaDoc } from './schema-doc.js';

const out = fileURLToPath(new URL('../../../docs/schema.md', import.meta.url));
writeFileSync(out, withSchemaDoc(readFileSync(out, 'utf8')));
console.log(`wrote ${out}`);
