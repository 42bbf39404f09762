import type { IncomingMessage, ServerResponse } from 'node:http';
import { swaggerAsset } from '../swagger-ui.js';
import { API_VERSION } from '../vocabulary/collections.js';
import type { JsonObject } from '../vocabulary/ids.js';
import { allowedMethods } from './sim-allowed-methods.js';
import { openapiDoc } from './sim-openapi-doc.js';
import { graphiqlHtml, PIXEL_PNG, swaggerHtml } from './sim-pages.js';
import { isUnder, type PartnersLine, type RequestLine } from './sim-request-line.js';
import { send, sendNotFound, sendRaw } from './sim-respond.js';
import type { SimState } from './sim-state.js';

/** A route answered without a key, before any data-request bookkeeping; the first that matches answers. */
interface PublicRoute<L extends RequestLine> {
  readonly matches: (l: L, req: IncomingMessage) => boolean;
  readonly answer: (s: SimState, req: IncomingMessage, res: ServerResponse, l: L) => void | Promise<void>;
}

const FORBIDDEN_API: JsonObject = {
  error: 'Forbidden',
  message: 'API keys must use the Partners API at /partners/:version/:tenant/*',
};

/** Payload's own `/api`: closed to partners (an API key is told where to go). */
const answerPayloadApi = (_s: SimState, req: IncomingMessage, res: ServerResponse): void => {
  const auth = String(req.headers.authorization ?? '');
  if (/api-key/i.test(auth)) send(res, 403, FORBIDDEN_API);
  else send(res, 403, { errors: [{ message: 'You are not allowed to perform this action.' }] });
};

/** `/media/{tenant}/{filename}`: a one-pixel PNG for every stored media record. */
const answerMedia = (s: SimState, _req: IncomingMessage, res: ServerResponse, l: RequestLine): void => {
  const [, , tenant, file] = l.pathname.split('/');
  const t = s.tenants.find((x) => x.slug === tenant);
  if (t && file && t.collections.media.byId.has(decodeURIComponent(file))) sendRaw(res, 200, PIXEL_PNG, 'image/png');
  else sendNotFound(res);
};

/** Routes outside `/partners`. */
export const SITE_ROUTES: readonly PublicRoute<RequestLine>[] = [
  { matches: (l) => isUnder(l.pathname, '/api'), answer: answerPayloadApi },
  { matches: (l) => l.pathname.startsWith('/media/') && l.method === 'GET', answer: answerMedia },
  { matches: (l) => !isUnder(l.pathname, '/partners'), answer: (_s, _req, res) => sendNotFound(res) },
];

const answerOpenApi = (s: SimState, _req: IncomingMessage, res: ServerResponse): void => send(res, 200, openapiDoc(s));

/** `/partners/docs` (Swagger UI) and its assets. */
const answerDocs = async (_s: SimState, _req: IncomingMessage, res: ServerResponse, l: PartnersLine) => {
  if (l.segs.length === 1) return sendRaw(res, 200, swaggerHtml('/partners/openapi'), 'text/html; charset=utf-8');
  const asset = await swaggerAsset(l.segs[1] as string);
  if (asset) return sendRaw(res, 200, asset.body, asset.type);
  sendNotFound(res);
};

const answerUnknownVersion = (_s: SimState, _req: IncomingMessage, res: ServerResponse, l: PartnersLine): void =>
  send(res, 404, {
    errors: [{ message: `Unknown API version "${l.segs[0] ?? ''}"; the supported version is ${API_VERSION}` }],
  });

/** A browser asking for the GraphQL endpoint (HTML, no query) gets the GraphiQL page. */
const isGraphiqlPage = (l: PartnersLine, req: IncomingMessage): boolean =>
  l.segs.length === 3 &&
  l.segs[2] === 'graphql' &&
  l.method === 'GET' &&
  String(req.headers.accept ?? '').includes('text/html') &&
  l.search === '';

const answerGraphiql = (_s: SimState, _req: IncomingMessage, res: ServerResponse, l: PartnersLine): void =>
  sendRaw(res, 200, graphiqlHtml(`/partners/${API_VERSION}/${l.segs[1]}/graphql`), 'text/html; charset=utf-8');

/** Preflight: answered without a key, like Payload's OPTIONS handler (CORS), and not counted as a data request. */
const answerPreflight = (s: SimState, _req: IncomingMessage, res: ServerResponse, l: PartnersLine): void => {
  const allow = ['OPTIONS', ...allowedMethods(s, l.segs.slice(2))].join(', ');
  res.writeHead(204, { allow, 'access-control-allow-methods': allow });
  res.end();
};

/** Routes under `/partners` answered without a key; what none of them matches is a data request. */
export const PARTNERS_ROUTES: readonly PublicRoute<PartnersLine>[] = [
  { matches: (l) => l.method === 'GET' && l.segs.length === 1 && l.segs[0] === 'openapi', answer: answerOpenApi },
  { matches: (l) => l.method === 'GET' && l.segs[0] === 'docs' && l.segs.length <= 2, answer: answerDocs },
  { matches: (l) => l.segs[0] !== API_VERSION, answer: answerUnknownVersion },
  { matches: (l) => l.segs.length === 2 && l.segs[1] === 'openapi' && l.method === 'GET', answer: answerOpenApi },
  { matches: (l) => l.segs.length < 3, answer: (_s, _req, res) => sendNotFound(res) },
  { matches: isGraphiqlPage, answer: answerGraphiql },
  { matches: (l) => l.method === 'OPTIONS', answer: answerPreflight },
];
