import Fastify, { LogController, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import cookie from '@fastify/cookie';
import swagger from '@fastify/swagger';
import { webRoutes } from './web/routes.ts';
import { pageHeaders } from './web/html.ts';
import { notFoundPage, wantsHtmlPage } from './web/not-found.ts';
import swaggerUi from '@fastify/swagger-ui';
import { docsUiOptions } from './http/docs-ui.ts';
import { guideRoutes } from './http/guide.ts';
import { initServer } from '@ts-rest/fastify';
import { contract } from '../contract/index.ts';
import { buildOpenApiDocument } from '../contract/openapi.ts';
import { trailHooks } from './http/request-trail-hooks.ts';
import { redactUrl } from './http/redact-url.ts';
import { clientRequestIdOf } from './http/client-request-id.ts';
import { authHook, routeMeta } from './http/auth-hook.ts';
import { GatewayError, errors, validationError } from './runtime/errors.ts';
import { clientErrorHandler, defaultRequestTimeouts, serverTimeoutOptions, type RequestTimeouts } from './http/client-errors.ts';
import { CREDENTIAL_HEADERS } from './client-formats/index.ts';
import { hasHeaderIn } from './client-formats/spec.ts';
import { envelopeBeforeRouting, errorBodyIn, formatRewrite, oauthError, routeEnvelope, type Envelope } from './http/client-format.ts';
import { deepestPath, nestsDeeperThan } from './http/json-depth.ts';
import { RouteMethods, methodNotAllowed } from './http/method-not-allowed.ts';
import { jsonSyntaxError } from './config/json-position.ts';
import { MAX_JSON_DEPTH } from '../contract/common.ts';
import { errorPage } from './http/oauth-endpoints.ts';
import { routeOptionsOf } from './http/route-options.ts';
import { buildRouter } from './http/router.ts';
import { lingerAfterAnswer } from './http/lingering-close.ts';
import { closeConnectionsWhileDraining } from './http/graceful-close.ts';
import type { Drain } from './runtime/shutdown.ts';
import { randomToken } from './runtime/secrets.ts';
import { isDatabaseUnavailable } from './db/unavailable.ts';
import { CounterStoreUnavailableError } from './stores/index.ts';
import type { Services } from './http/services.ts';

/** The largest JSON body by default (README: 20 MiB). */
const DEFAULT_BODY_LIMIT = 20 * 1024 * 1024;

export type AppOptions = {
  /** A pino logger; none: silent. */
  logger?: FastifyServerOptions['loggerInstance'];
  /** Largest JSON body in bytes (images inline as base64 make chat bodies large). */
  bodyLimit?: number;
  /** How long a client may take to send a request's headers, and the whole request. */
  requestTimeouts?: RequestTimeouts;
  /** The process's drain: while it holds, every answer closes its connection (server/http/graceful-close.ts). */
  drain?: Drain;
};

/** Headers never logged: credentials of every kind the gateway accepts. */
export const redactedPaths = ['req.headers.authorization', ...CREDENTIAL_HEADERS.map((h) => `req.headers["${h}"]`), 'req.headers.cookie'];

declare module 'fastify' {
  interface FastifyRequest {
    /** The error code the request was answered with, for its log line. */
    errorCode?: string;
    /** The client's own request id (X-Client-Request-Id or X-Request-Id), validated; null when none. */
    clientRequestId?: string | null;
    /** Why the request is refused before its route runs, once its record is open (an invalid client request id). */
    refusal?: GatewayError;
    /**
     * The content type of a raw answer (a file, audio): ts-rest sets the contract's one for
     * `otherResponse` routes, this one (the stored or upstream type) wins in onSend.
     */
    rawContentType?: string;
  }
}

/** What the hooks and routes set on a request (declared with Fastify's interface above and in auth-hook.ts, request-trail-hooks.ts, audio-upload.ts). */
const REQUEST_PROPERTIES = ['errorCode', 'clientRequestId', 'refusal', 'rawContentType', 'principal', 'adminActor', 'trail', 'capture', 'recordedPath', 'upload', 'keepUpload', 'routeMemo'] as const satisfies readonly (keyof FastifyRequest)[];

/**
 * The request's one log line: `POST /v1/chat/completions 502 all_upstreams_failed 1203 ms`, with
 * the fields behind it (URL redacted, upstream when one answered). 5xx answers log at warn.
 */
function logRequest(request: FastifyRequest, reply: FastifyReply): void {
  const status = reply.statusCode;
  const ms = Math.round(reply.elapsedTime * 10) / 10;
  const url = redactUrl(request.url, request.recordedPath);
  const upstream = reply.getHeader('x-gateway-upstream');
  const fields = { http: { method: request.method, url, status, ms, ip: request.ip }, code: request.errorCode, upstream: upstream ?? undefined, client_request_id: request.clientRequestId ?? undefined };
  const line = `${request.method} ${url.length > 200 ? `${url.slice(0, 200)}…` : url} ${status}${request.errorCode ? ` ${request.errorCode}` : ''} ${ms} ms`;
  if (status >= 500) request.log.warn(fields, line);
  else request.log.info(fields, line);
}

/** One line per request when it ends (Fastify logs two, and a third for unknown routes). */
class OneLinePerRequest extends LogController {
  override incomingRequest() {}
  override routeNotFound() {}
  override requestCompleted(_error: unknown, request: FastifyRequest, reply: FastifyReply) {
    logRequest(request, reply);
  }
}

/** The request as logged: Fastify's fields, the URL redacted. */
const requestLogView = (request: FastifyRequest) => ({
  method: request.method,
  url: redactUrl(request.url),
  host: request.host,
  remoteAddress: request.ip,
  remotePort: request.socket?.remotePort,
});

/** A byte count as people write limits: `20 MiB`, `512 KiB`. */
const sizeInWords = (bytes: number) =>
  bytes % 2 ** 20 === 0 ? `${bytes / 2 ** 20} MiB` : bytes % 1024 === 0 ? `${bytes / 1024} KiB` : `${bytes} bytes`;

/** Where a JSON text goes wrong, once: `line 1, column 12` (Node's messages may give it twice, or echo the body). */
function jsonProblem(text: string): string | null {
  const found = jsonSyntaxError(text, 'the end of the body');
  if (!found) return null;
  const before = text.slice(0, found.offset);
  const line = before.split('\n').length;
  const column = found.offset - before.lastIndexOf('\n');
  return `The request body is not valid JSON: ${found.message} at line ${line}, column ${column}.`;
}

/** `bodyLimit`: the route's largest body, named in a 413. */
function toGatewayError(err: FastifyError | GatewayError, bodyLimit?: number): GatewayError {
  if (err instanceof GatewayError) return err;
  // A store outage is no bug: 503 naming the store, with Retry-After (docs/decisions/0010-store-outages.md).
  if (err instanceof CounterStoreUnavailableError) return errors.counterStoreUnavailable();
  // Node's error for a request whose connection closed before its body was complete (the client
  // left, or the body timed out): ECONNRESET, as a lost database connection's, but the client's.
  if (err.code === 'ECONNRESET' && err.message === 'aborted') return errors.invalid('The connection closed before the request body was complete.', null, 'client_closed_request');
  if (isDatabaseUnavailable(err)) return errors.databaseUnavailable();
  const status = err.statusCode ?? 500;
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return errors.tooLarge(
        bodyLimit
          ? `The request body is larger than ${sizeInWords(bodyLimit)}, the most this endpoint accepts: send large images and files by URL rather than inline.`
          : 'The request body is larger than this endpoint accepts.',
      );
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return errors.unsupportedMediaType('Unsupported Content-Type for this endpoint.');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return errors.invalid('The request body is empty; a JSON object is expected.', null, 'invalid_json');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return errors.invalid(`The request body is not valid JSON: ${err.message}`, null, 'invalid_json');
  }
  if (err instanceof SyntaxError && status === 400) return errors.invalid(`The request body is not valid JSON: ${err.message}`, null, 'invalid_json');
  // PostgreSQL cannot store NUL (22021 in text, 22P05 in jsonb). The contract keeps NUL out of the fields it knows reach
  // the database; this catches any it does not, as the client's error it is.
  if (/\b22(021|P05)\b/.test(err.message ?? '')) return errors.invalid('A text field contains a NUL character, which the gateway cannot store.', null, 'invalid_parameter');
  if (status >= 400 && status < 500) return errors.invalid(err.message);
  return errors.internal();
}

/**
 * An error in the body the route's clients read: the OAuth protocol endpoints (token, revocation,
 * userinfo) in RFC 6749 §5.2 form, never cached; Google's on the Gemini-format routes; the others
 * the part-7 body, with Anthropic's `"type": "error"` envelope where the route says so.
 */
function sendError(request: FastifyRequest, reply: FastifyReply, gw: GatewayError): FastifyReply {
  return sendErrorIn(request, reply, routeEnvelope(routeMeta(request), hasHeaderIn(request.headers)), gw);
}

/** `gw` in `envelope`'s body. */
function sendErrorIn(request: FastifyRequest, reply: FastifyReply, envelope: Envelope, gw: GatewayError): FastifyReply {
  request.errorCode = gw.code;
  if (envelope === 'oauth') return reply.status(gw.status === 503 ? 503 : gw.status >= 500 ? 500 : 400).header('cache-control', 'no-store').send(oauthError(gw));
  if (envelope === 'page') {
    return reply.status(gw.status).header('content-type', 'text/html; charset=utf-8').send(errorPage(gw.status >= 500 ? 'Something went wrong' : 'Invalid request', gw.message));
  }
  return reply.status(gw.status).send(errorBodyIn(envelope, gw));
}

/** The error body of a request no route has taken, from its method, URL and headers. */
const envelopeOf = (request: FastifyRequest) => envelopeBeforeRouting(request.method, request.url, hasHeaderIn(request.headers));

/** The path of a request as named in an error: short and printable, or not at all. */
function echoPath(url: string): string | null {
  const path = url.split('?')[0]!;
  return path.length <= 120 && /^[\x21-\x7e]*$/.test(path) ? path : null;
}

export async function buildApp(services: Services, opts: AppOptions = {}): Promise<FastifyInstance> {
  const { trustProxy } = services.config;
  const timeouts = opts.requestTimeouts ?? defaultRequestTimeouts;
  const app = Fastify({
    // The caller's logger, with our request serializer (it wins over Fastify's default).
    ...(opts.logger ? { loggerInstance: opts.logger.child({}, { serializers: { req: requestLogView } }) } : { logger: false }),
    bodyLimit: opts.bodyLimit ?? DEFAULT_BODY_LIMIT,
    // Every request's id is the gateway's own: the key of its ledger row, its request-log record and
    // its trail. A client's X-Request-Id is validated and kept beside it (http/client-request-id.ts).
    requestIdHeader: false,
    genReqId: () => `req_${randomToken(20)}`,
    // Forwarded headers only from configured proxies: anyone else could name the issuer and
    // callback URLs (X-Forwarded-Host) or dodge per-address throttling (X-Forwarded-For). A hop
    // count trusts the nearest hops whatever their address (Express's meaning; Fastify would
    // ignore it), which is right only when clients cannot reach the gateway directly.
    trustProxy: typeof trustProxy === 'number' ? (_address: string, hop: number) => hop < trustProxy : trustProxy,
    logController: new OneLinePerRequest(),
    // A request that reaches a closing server (on a connection already open) is served, with
    // `Connection: close`: a 503 would fail it, as a proxy does not retry a POST it has sent
    // (decision 0029). The closed listener and /readyz are what turn traffic away.
    return503OnClosing: false,
    rewriteUrl: formatRewrite,
    forceCloseConnections: 'idle',
    // Headers and bodies that trickle in or stall are cut (408) rather than holding a connection
    // for ever; neither limit runs once the request is in, so answers may take as long as they need.
    ...serverTimeoutOptions(timeouts),
    clientErrorHandler: clientErrorHandler(timeouts),
    // A URL that cannot be decoded, or a path parameter longer than any id: answered before routing,
    // in the body the path's clients read (Google's under /v1beta).
    frameworkErrors: (err, request, frameworkReply) => {
      const reply = frameworkReply as unknown as FastifyReply;
      const gw =
        err.code === 'FST_ERR_MAX_PARAM_LENGTH'
          ? new GatewayError(414, 'invalid_request_error', 'uri_too_long', 'A path segment of the URL is longer than any id this gateway issues (100 characters).')
          : errors.invalid('The URL is not valid: it contains a malformed percent-encoding.', null, 'invalid_url');
      // Fastify ignores what this returns (the reply is sent, not awaited).
      void sendErrorIn(request, reply, envelopeOf(request), gw);
    },
  });

  // Every route's methods, for 405 on a known path (registered before any route is added).
  const routeMethods = RouteMethods.track(app);
  // Every property the gateway's hooks set on a request, declared up front: Fastify then gives
  // each request all of them in its constructor, so every request has one shape, and the code that
  // reads them (ours, Fastify's) stays monomorphic rather than seeing a shape per order they were added in.
  for (const name of REQUEST_PROPERTIES) app.decorateRequest(name, undefined);
  if (opts.drain) closeConnectionsWhileDraining(app, opts.drain);

  app.setErrorHandler((err: FastifyError, request, reply) => {
    const gw = toGatewayError(err, request.routeOptions?.bodyLimit ?? opts.bodyLimit ?? DEFAULT_BODY_LIMIT);
    if (gw.status >= 500 && gw.code === 'internal_error') request.log.error({ err }, 'unhandled error');
    else if (gw.code === 'counter_store_unavailable' || gw.code === 'database_unavailable') request.log.warn({ err: err.message }, gw.code);
    for (const [k, v] of Object.entries(gw.headers)) reply.header(k, v);
    if (gw.headers.connection === 'close') lingerAfterAnswer(request.raw);
    return sendError(request, reply, gw);
  });
  app.setNotFoundHandler(async (request, reply) => {
    const path = echoPath(request.url);
    // Google's clients read Google's error shape under Gemini's API version prefix, Anthropic's
    // theirs; RFC 6749 has no word for these two statuses: the OAuth endpoints answer the common body.
    const envelope = envelopeOf(request);
    const body = envelope === 'oauth' ? 'common' : envelope;
    // A known path with another method: which ones it takes, not "unknown route". (A route that
    // found nothing to answer and handed over here matched its method: that is a 404.)
    const allowed = request.routeOptions.url === undefined ? routeMethods.allowed(request.url.split('?')[0]!) : [];
    if (allowed.length) {
      const gw = methodNotAllowed(request.method, path, allowed);
      return sendErrorIn(request, reply.headers(gw.headers), body, gw);
    }
    request.errorCode = 'not_found';
    if (wantsHtmlPage(request)) {
      // The header shows who is signed in; a database that cannot say still gets the page.
      const user = await services.sessions.user(request).catch(() => null);
      return reply.status(404).headers(pageHeaders).send(notFoundPage(path, user));
    }
    const gw = errors.notFound(path ? `Unknown route: ${request.method} ${path}.` : 'Unknown route.', 'not_found');
    return sendErrorIn(request, reply, body, gw);
  });

  // JSON bodies: Fastify's parser (prototype-poisoning checks), after the nesting limit.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string;
    if (!nestsDeeperThan(text, MAX_JSON_DEPTH)) {
      return parseJson(request, text, (err, parsed) => {
        // A syntax error said with its position once, and without echoing the body.
        const problem = err instanceof SyntaxError || (err as FastifyError | null)?.code === 'FST_ERR_CTP_INVALID_JSON_BODY' ? jsonProblem(text) : null;
        done(problem ? errors.invalid(problem, null, 'invalid_json') : err, problem ? undefined : parsed);
      });
    }
    let param: string | null = null;
    try {
      param = deepestPath(JSON.parse(text), MAX_JSON_DEPTH);
    } catch {
      // not JSON either: the nesting is what gets reported
    }
    const top = param?.split(/[.[]/)[0];
    done(errors.invalid(`The request body is nested deeper than ${MAX_JSON_DEPTH} levels${top ? ` (in '${top}')` : ''}.`, param, 'nesting_too_deep'), undefined);
  });

  // No route takes plain text: such a body is 415 like any other unsupported type (Fastify would
  // parse it as a string and the route would call it invalid JSON).
  app.removeContentTypeParser('text/plain');

  // RFC 6749 token requests are form-encoded.
  // Only they and the web pages' forms: `curl -d` without a content type sends a JSON body as a
  // form, which a JSON route must refuse by its media type, not misread as a form missing `model`.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (request, body, done) => {
    const route = (routeOptionsOf(request).config as { tsRestRoute?: { method: string; contentType?: string } }).tsRestRoute;
    if (route && route.method !== 'GET' && route.contentType !== 'application/x-www-form-urlencoded') {
      const hint = /^\s*[[{]/.test(body as string) ? ' (a JSON body sent as a form: with curl, add -H "Content-Type: application/json")' : '';
      return done(errors.unsupportedMediaType(`This endpoint takes application/json, not application/x-www-form-urlencoded${hint}.`), undefined);
    }
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });

  // Callback hooks (not async): every request runs them, and a promise each is measurable.
  app.addHook('onRequest', (request, reply, done) => {
    // nosniff everywhere: no answer (a page, an error echoing input, a stored file) is ever read
    // by a browser as another type than it says.
    reply.header('x-request-id', request.id).header('x-content-type-options', 'nosniff');
    try {
      const clientId = clientRequestIdOf(request.headers);
      request.clientRequestId = clientId;
      if (clientId !== null) reply.header('x-client-request-id', clientId);
    } catch (err) {
      // An API route refuses it once its record is open (http/request-trail-hooks.ts): a refused
      // request is recorded too. A page (or an unknown path) stores nothing of it and shows as
      // ever: the invalid id is left out, not echoed, not logged.
      if ((routeOptionsOf(request).config as { tsRestRoute?: unknown }).tsRestRoute) request.refusal = err as GatewayError;
      else request.clientRequestId = null;
    }
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    const route = routeOptionsOf(request).url ?? 'unmatched';
    services.metrics.requests.inc({ method: request.method, route, status: reply.statusCode });
    services.metrics.latency.observe({ method: request.method, route }, reply.elapsedTime / 1000);
    done();
  });

  // Cookies at the root: the web pages and the OAuth authorize endpoint (contract scope) read the session.
  await app.register(cookie, { secret: services.cookieSecret });
  await app.register(async (scope) => webRoutes(scope, services));

  const document = buildOpenApiDocument(services.version);
  app.get('/openapi.json', { logLevel: 'warn' }, async () => document);
  // openapi3-ts's document type (zod-to-openapi) and openapi-types' (fastify-swagger) differ only in details (server variable enums): one cast.
  await app.register(swagger, { mode: 'static', specification: { document: document as never } });
  await app.register(swaggerUi, docsUiOptions);
  await app.register(guideRoutes);

  // The contract's routes in a child scope: its hooks apply to them alone.
  await app.register(async (scope) => {
    // Before the credential is checked: a refused request is logged too.
    const trails = trailHooks(services);
    scope.addHook('onRequest', trails.onRequest);
    scope.addHook('onRequest', authHook(services));
    scope.addHook('preValidation', trails.preValidation);
    // Multipart bodies (transcription uploads) are read by their route as a stream
    // (http/multipart-form.ts): let through unread to the routes that take a form; any other
    // route refuses one at once, closing the connection rather than reading a body it cannot use.
    scope.addContentTypeParser('multipart/form-data', (request, _payload, done) => {
      const route = (routeOptionsOf(request).config as { tsRestRoute?: { contentType?: string } }).tsRestRoute;
      if (route?.contentType === 'multipart/form-data') return done(null, undefined);
      const gw = errors.unsupportedMediaType('This endpoint takes application/json, not multipart/form-data.');
      done(new GatewayError(gw.status, gw.type, gw.code, gw.message, null, { connection: 'close' }), undefined);
    });
    // A callback hook: no promise per request on the hot path.
    scope.addHook('onSend', (request, reply, payload, done) => {
      if (request.rawContentType && reply.statusCode < 300) reply.header('content-type', request.rawContentType);
      // An answer carrying a secret (a new key, a client secret, the CSRF token) is kept by no cache.
      if (routeMeta(request)?.noStore) reply.header('cache-control', 'no-store');
      done(null, payload);
    });
    initServer().registerRouter(contract, buildRouter(services), scope, {
      logInitialization: false,
      responseValidation: false,
      // ts-rest makes this Fastify's error handler, which takes the reply it returns as sent: the
      // reply is returned on purpose, though the option's type says void.
      // eslint-disable-next-line @typescript-eslint/no-misused-promises
      requestValidationErrorHandler: (err, request, reply) => {
        const [issues, where] = err.body
          ? [err.body.issues, 'body' as const]
          : err.query
            ? [err.query.issues, 'query' as const]
            : err.pathParams
              ? [err.pathParams.issues, 'path' as const]
              : [err.headers?.issues ?? [], 'headers' as const];
        const input = where === 'body' ? request.body : where === 'query' ? request.query : where === 'path' ? request.params : request.headers;
        // ts-rest types issues as Standard Schema ones (path segments may be objects); its zod schemas give zod issues, whose paths are keys.
        const gw = validationError(issues as never, where, input);
        // A path parameter that cannot be an id of its kind names nothing that exists.
        const notFound = where === 'path' ? routeMeta(request)?.notFound : undefined;
        return sendError(request, reply, notFound ? errors.notFound(`No such ${notFound.what}.`, notFound.code, gw.param) : gw);
      },
    });
  });

  return app;
}
