import type { IncomingMessage, ServerResponse } from 'node:http';
import { answerData } from './sim-data-request.js';
import { PARTNERS_ROUTES, SITE_ROUTES } from './sim-public-routes.js';
import { dataLine, partnersLine, requestLine } from './sim-request-line.js';
import type { SimState } from './sim-state.js';

/** The request handler: public routes, then the API-key-guarded data routes under `/partners/{version}/{tenant}`. */
export async function handle(s: SimState, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const line = requestLine(req);
  const site = SITE_ROUTES.find((r) => r.matches(line, req));
  if (site) return site.answer(s, req, res, line);
  const partners = partnersLine(line);
  const pub = PARTNERS_ROUTES.find((r) => r.matches(partners, req));
  if (pub) return pub.answer(s, req, res, partners);
  return answerData(s, req, res, dataLine(partners));
}
