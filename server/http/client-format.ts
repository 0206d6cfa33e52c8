// Which client a request comes from, as far as the HTTP layer can tell, and so which error body it
// reads: a client format's own (server/client-formats/: Google's on the Gemini-format routes,
// Anthropic's `"type": "error"` where Anthropic's clients call), RFC 6749's on the OAuth protocol
// endpoints, the common body elsewhere. A routed request says by its route's metadata; one
// answered before (or without) a route, by its method, path and headers.
import type { IncomingMessage } from 'node:http';
import { contract, type RouteMeta } from '../../contract/index.ts';
import { walk } from '../../contract/openapi.ts';
import { formatMarkedBy, formatOfEnvelope, formatOfPath, rewrittenUrl } from '../client-formats/index.ts';
import { hasHeaderIn, type FormatEnvelope, type HasHeader } from '../client-formats/spec.ts';
import type { GatewayError } from '../runtime/errors.ts';
import { pathPattern } from './method-not-allowed.ts';

/** The error bodies: the common one, a client format's own, RFC 6749's, an HTML page. */
export type Envelope = 'common' | FormatEnvelope | 'oauth' | 'page';

/** Fastify's `rewriteUrl`: a path of another format a format's clients read, rewritten to its own (Google's SDKs read the catalog under /v1). */
export const formatRewrite = (req: IncomingMessage): string => rewrittenUrl(req.method, req.url ?? '/', hasHeaderIn(req.headers));

/** The error body of a route (its metadata), for a request carrying the headers `has` says. */
export function routeEnvelope(meta: RouteMeta | undefined, has: HasHeader): Envelope {
  if (meta?.auth === 'oauth-client' || meta?.auth === 'oauth-token') return 'oauth';
  const envelope = meta?.errorEnvelope;
  if (envelope === undefined) return 'common';
  // A route several formats share answers the format whose clients the request's marker header names.
  if (envelope === 'marked') return formatMarkedBy(has)?.envelope ?? 'common';
  return envelope;
}

const ROUTES = [...walk(contract)].map(([, r]) => ({ method: r.method, pattern: pathPattern(r.path), wildcard: r.path.includes('*'), meta: r.metadata as RouteMeta }));

/**
 * The error body of a request no route has taken (yet): its path is undecodable, its headers too
 * large, its method not the path's, or no route has its path. Every path under a format's prefix
 * is that format's (Google's API under /v1beta); elsewhere, the body of the routes the path (and
 * method, when known) would reach, as the router would choose among them (a static or parametric
 * path before a wildcard), when they agree; the common body when they do not or there is none. An
 * HTML page needs a route to render it: the common body instead.
 */
export function envelopeBeforeRouting(method: string | undefined, url: string, has: HasHeader): Exclude<Envelope, 'page'> {
  const path = rewrittenUrl(method, url, has).split('?')[0]!;
  const owner = formatOfPath(path);
  if (owner) return owner.envelope ?? 'common';
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
  if (envelope === 'oauth') return oauthError(gw);
  if (envelope === 'common') return gw.toBody();
  return formatOfEnvelope(envelope)?.errorBody(gw) ?? gw.toBody();
}
