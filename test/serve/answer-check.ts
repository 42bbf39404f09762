import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { serveOpenApi } from '../../src/serve/openapi.js';

/**
 * Checks an answer of `understudy serve` against its OpenAPI document (`serveOpenApi`): the operation of a concrete
 * path (`/partners/2026-02/acme/event-instances/42` → `/partners/2026-02/{tenant}/event-instances/{id}`), the status,
 * the content type, the required headers, and the body against the schema of that status and content type (Ajv,
 * JSON Schema 2020-12, the document's own `$ref`s). A mismatch throws an error that says what and where.
 */

type Json = Record<string, unknown>;

const DOC_ID = 'https://understudy.local/serve/openapi.json';
const doc = serveOpenApi() as Json & { paths: Record<string, Record<string, Json>> };

// `strict: false`: the document holds OpenAPI keywords (`paths`, `components`, …) around its schemas.
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
ajv.addSchema({ ...doc, $id: DOC_ID });

const validators = new Map<string, ValidateFunction>();
/** The validator of the schema at a JSON pointer into the document (compiled once). */
function validatorAt(pointer: readonly string[]): ValidateFunction {
  const fragment = pointer.map((p) => encodeURIComponent(p.replace(/~/g, '~0').replace(/\//g, '~1'))).join('/');
  const key = `${DOC_ID}#/${fragment}`;
  let validate = validators.get(key);
  if (!validate) {
    validate = ajv.compile({ $ref: key });
    validators.set(key, validate);
  }
  return validate;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** The templated path of `path` with an operation for `method`: of those that match, the one with fewest templates. */
export function findOperation(method: string, path: string): { template: string; operation: Json } {
  const m = method.toLowerCase();
  const segs = path.split(/[?#]/)[0]?.split('/') ?? [];
  const matching = Object.keys(doc.paths).filter((t) => {
    const ts = t.split('/');
    return ts.length === segs.length && ts.every((s, i) => (/^\{.+\}$/.test(s) ? segs[i] !== '' : s === segs[i]));
  });
  const templates = (t: string) => (t.match(/\{/g) ?? []).length;
  const withMethod = matching.filter((t) => doc.paths[t]?.[m]).sort((a, b) => templates(a) - templates(b));
  const template = withMethod[0];
  if (template === undefined) {
    const known = matching.flatMap((t) => Object.keys(doc.paths[t] ?? {}).filter((k) => METHODS.includes(k)));
    throw new Error(
      matching.length === 0
        ? `checkAnswer: no path of the document matches ${path}`
        : `checkAnswer: ${path} (${matching.join(', ')}) has no ${method.toUpperCase()} (it has ${known.join(', ').toUpperCase()})`,
    );
  }
  return { template, operation: doc.paths[template]?.[m] as Json };
}

const headerMap = (headers: Headers | Record<string, string | undefined>): Map<string, string> => {
  const entries = headers instanceof Headers ? [...headers.entries()] : Object.entries(headers);
  return new Map(
    entries.filter((e): e is [string, string] => e[1] !== undefined).map(([k, x]) => [k.toLowerCase(), x]),
  );
};

const isJsonType = (type: string): boolean => type === 'application/json' || type.endsWith('+json');

/** The body as the schema sees it: JSON text parsed when the type is JSON. */
function bodyValue(type: string, body: unknown, where: string): unknown {
  if (!isJsonType(type) || typeof body !== 'string') return body;
  try {
    return JSON.parse(body);
  } catch {
    throw new Error(`${where}: the body is not JSON: ${body.slice(0, 200)}`);
  }
}

const excerpt = (body: unknown): string => {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return text === undefined ? 'undefined' : text.length > 600 ? `${text.slice(0, 600)}…` : text;
};

/** Fails unless the headers the answer must carry are there, each fitting its schema. */
function checkHeaders(response: Json, pointer: readonly string[], headers: Map<string, string>, where: string): void {
  for (const [name, spec] of Object.entries((response.headers ?? {}) as Record<string, Json>)) {
    const value = headers.get(name.toLowerCase());
    if (value === undefined) {
      if (spec.required === true) throw new Error(`${where}: the ${name} header is missing`);
      continue;
    }
    const validate = validatorAt([...pointer, 'headers', name, 'schema']);
    if (!validate(value)) throw new Error(`${where}: header ${name}: ${ajv.errorsText(validate.errors)}: ${value}`);
  }
}

/**
 * Throws unless `body` fits the request body the document describes for `method` and the concrete `path` (JSON). The
 * body schemas are the write bodies' own, so what enqueue accepts the document does, and the reverse.
 */
export function checkRequestBody(method: string, path: string, body: unknown): void {
  const { template } = findOperation(method, path);
  const pointer = ['paths', template, method.toLowerCase(), 'requestBody', 'content', 'application/json', 'schema'];
  const validate = validatorAt(pointer);
  if (!validate(body)) {
    const where = `checkRequestBody: ${method.toUpperCase()} ${path} (${template})`;
    throw new Error(`${where}: ${ajv.errorsText(validate.errors, { dataVar: 'body' })}\nbody: ${excerpt(body)}`);
  }
}

/**
 * Throws unless the answer fits the document: `method` and the concrete `path` (a query string is ignored), its
 * `status`, its `headers` (a `Headers` or a plain object), and its `body` (parsed JSON, or text: JSON text is parsed
 * when the content type is JSON; undefined for none). Returns the templated path it was checked against.
 */
export function checkAnswer(
  method: string,
  path: string,
  status: number,
  headers: Headers | Record<string, string | undefined>,
  body: unknown,
): string {
  const { template, operation } = findOperation(method, path);
  const where = `checkAnswer: ${method.toUpperCase()} ${path} → ${status} (${template})`;
  const responses = (operation.responses ?? {}) as Record<string, Json>;
  const key = [String(status), `${String(status)[0]}XX`, 'default'].find((k) => responses[k]);
  if (key === undefined)
    throw new Error(`${where}: the document has no ${status} answer (${Object.keys(responses).join(', ')})`);
  const response = responses[key] as Json;
  const pointer = ['paths', template, method.toLowerCase(), 'responses', key];
  const map = headerMap(headers);
  checkHeaders(response, pointer, map, where);
  const content = response.content as Record<string, Json> | undefined;
  const type = (map.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (!content) {
    if (body !== undefined && body !== null && body !== '')
      throw new Error(`${where}: no body is described, got ${excerpt(body)}`);
    return template;
  }
  if (!content[type])
    throw new Error(`${where}: content type "${type}" is not one of ${Object.keys(content).join(', ')}`);
  const value = bodyValue(type, body, where);
  const validate = validatorAt([...pointer, 'content', type, 'schema']);
  if (!validate(value)) {
    throw new Error(
      `${where}, ${type}: ${ajv.errorsText(validate.errors, { dataVar: 'body' })}\nbody: ${excerpt(value)}`,
    );
  }
  return template;
}
