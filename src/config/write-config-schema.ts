/** `npm run schemas`: rewrites config/understudy.schema.json from the valibot config schema. */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { configJsonSchema } from './config-json-schema.js';

const out = fileURLToPath(new URL('../../../config/understudy.schema.json', import.meta.url));
writeFileSync(out, `${JSON.stringify(configJsonSchema(), null, 2)}\n`);
console.log(`wrote ${out}`);
