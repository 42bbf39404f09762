import { serveOpenApi } from './dist/src/serve/openapi.js';
import { Validator } from '@seriousme/openapi-schema-validator';
const d = serveOpenApi();
console.log(JSON.stringify(d).length, Object.keys(d.paths).length);
const r = await new Validator().validate(d);
console.log(r.valid, JSON.stringify(r.errors)?.slice(0, 2000));
console.log(JSON.stringify(d.paths['/partners/2026-02/{tenant}/event-instances/{id}'].patch, null, 1).slice(0, 3000));
console.log(JSON.stringify(d.components.schemas.Problem));
console.log(Object.keys(d.components.schemas).join(' '));
