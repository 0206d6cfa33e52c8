// Which client a request comes from, as far as the HTTP layer can tell, and so which error body it
// reads: Google's on the Gemini-format routes, Anthropic's `"type": "error"` where Anthropic's clients
// call, RFC 6749's on the OAuth protocol endpoints, the common body elsewhere. A routed request says
// by its route's metadata; one answered before (or without) a route, by its method, path and headers.
import type { IncomingMessage } from 'node:http';
import { contract, type RouteMeta } from '../../contract/index.ts';
import { walk } from '../../contract/openapi.ts';
import type { GatewayError } from '../runtime/errors.ts';
import { geminiErrorOf } from '../translate/gemini.ts';
import { pathPattern } from './method-not-allowed.ts';

/** The error bodies: the common one, Anthropic's envelope of it, Google's, RFC 6749's, an HTML page. */
export type Envelope = 'common' | 'anthropic' | 'google' | 'oauth' | 'page';

/** Whether the request carries a header (lower-case name). */
type HasHeader = (name: string) => boolean;

/**
 * Google's SDKs (apiVersion v1, @google/genai's default) read the catalog at `GET /v1/models` and
 * `GET /v1/models/{model}`, which are the OpenAI-shaped catalog's paths: a request carrying Google's
 * credential (`x-goog-api-key`, or `?key=`) is served the Gemini-shaped catalog of /v1beta instead.
 */
export function geminiCatalogPath(method: string | undefined, url: string, googleKeyHeader: boolean): string {
  if (method !== 'GET' || !url.startsWith('/v1/models') || url.startsWith('/v1/models/status')) return url;
  const rest = url.slice('/v1/models'.length);
  if (rest !== '' && rest[0] !== '/' && rest[0] !== '?') return url;
  return googleKeyHeader || /[?&]key=/.test(rest) ? `/v1beta/models${rest}` : url;
}

/** Fastify's `rewriteUrl`: the Gemini-shaped catalog under /v1 for Google's clients. */
export const geminiCatalogUnderV1 = (req: IncomingMessage): string => geminiCatalogPath(req.method, req.url ?? '/', req.headers['x-goog-api-key'] !== undefined);

/** Anthropic's SDKs send `anthropic-version` with every request; the catalog answers them in Anthropic's shape. */
export const anthropicVersioned = (request: { headers: IncomingMessage['headers'] }) => request.headers['anthropic-version'] !== undefined;

/** The error body of a route (its metadata), for a request carrying the headers `has` says. */
export function routeEnvelope(meta: RouteMeta | undefined, has: HasHeader): Envelope {
  if (meta?.auth === 'oauth-client' || meta?.auth === 'oauth-token') return 'oauth';
  switch (meta?.errorEnvelope) {
    case 'google':
      return 'google';
    case 'anthropic':
      return 'anthropic';
    case 'anthropic-versioned':
      return has('anthropic-version') ? 'anthropic' : 'common';
    case 'page':
      return 'page';
    default:
      return 'common';
  }
}

const ROUTES = [...walk(contract)].map(([, r]) => ({ method: r.method, pattern: pathPattern(r.path), wildcard: r.path.includes('*'), meta: r.metadata as RouteMeta }));

/**
 * The error body of a request no route has taken (yet): its path is undecodable, its headers too
 * large, its method not the path's, or no route has its path. Everything under /v1beta is Google's
 * API; elsewhere, the body of the routes the path (and method, when known) would reach, as the
 * router would choose among them (a static or parametric path before a wildcard), when they agree;
 * the common body when they do not or there is none. An HTML page needs a route to render it: the
 * common body instead.
 */
export function envelopeBeforeRouting(method: string | undefined, url: string, has: HasHeader): Exclude<Envelope, 'page'> {
  const path = geminiCatalogPath(method, url, has('x-goog-api-key')).split('?')[0]!;
  if (path === '/v1beta' || path.startsWith('/v1beta/')) return 'google';
  let routes = ROUTES.filter((r) => r.pattern.test(path));
  const sameMethod = routes.filter((r) => r.method === method || (method === 'HEAD' && r.method === 'GET'));
  if (sameMethod.length) routes = sameMethod;
  const exact = routes.filter((r) => !r.wildcard);
  if (exact.length) routes = exact;
  const found = new Set(routes.map((r) => routeEnvelope(r.meta, has)));
  const [only] = found;
  return found.size === 1 && only !== 'page' ? only! : 'common';
}

/** The RFC 6749 §5.2 body for an error of the OAuth protocol endpoints. */
export function oauthError(gw: GatewayError) {
  // A store outage keeps its 503 (and Retry-After): RFC 6749 calls it temporarily_unavailable.
  return { error: gw.status === 503 ? 'temporarily_unavailable' : gw.status >= 500 ? 'server_error' : 'invalid_request', error_description: gw.message };
}

/** `gw`'s body in a JSON envelope. */
export function errorBodyIn(envelope: Exclude<Envelope, 'page'>, gw: GatewayError): object {
  switch (envelope) {
    case 'google':
      return geminiErrorOf(gw);
    case 'anthropic':
      return { type: 'error', ...gw.toBody() };
    case 'oauth':
      return oauthError(gw);
    default:
      return gw.toBody();
  }
}
