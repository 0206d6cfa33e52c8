import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import cookie from '@fastify/cookie';
import swagger from '@fastify/swagger';
import { webRoutes } from './web/routes.ts';
import swaggerUi from '@fastify/swagger-ui';
import { initServer } from '@ts-rest/fastify';
import { contract } from '../contract/index.ts';
import { buildOpenApiDocument } from '../contract/openapi.ts';
import { authHook, routeMeta } from './http/auth-hook.ts';
import { GatewayError, errors, validationError } from './http/errors.ts';
import { buildRouter } from './endpoints/router.ts';
import { randomToken } from './auth/secrets.ts';
import type { Services } from './services.ts';

export type AppOptions = {
  /** A pino logger; none: silent. */
  logger?: FastifyServerOptions['loggerInstance'];
  /** Largest JSON body in bytes (images inline as base64 make chat bodies large). */
  bodyLimit?: number;
};

/** Headers never logged: credentials of every kind the gateway accepts. */
export const redactedPaths = ['req.headers.authorization', 'req.headers["x-api-key"]', 'req.headers.cookie'];

// Query parameters that carry a secret somewhere: authorization codes and states (the gateway's own
// callbacks from identity providers, the apps' authorize requests), tokens, client secrets, keys.
const SECRET_PARAMS = new Set(['code', 'state', 'code_verifier', 'token', 'access_token', 'refresh_token', 'id_token', 'client_secret', 'password', 'key', 'api_key']);

/** `url` with the values of secret-bearing query parameters replaced, also inside `next`. */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const params = new URLSearchParams();
  for (const [name, value] of new URLSearchParams(url.slice(q + 1))) {
    params.append(name, SECRET_PARAMS.has(name) ? 'redacted' : name === 'next' ? redactUrl(value) : value);
  }
  return `${url.slice(0, q)}?${params}`;
}

/** The request as logged: Fastify's fields, the URL redacted. */
const requestLogView = (request: FastifyRequest) => ({
  method: request.method,
  url: redactUrl(request.url),
  host: request.host,
  remoteAddress: request.ip,
  remotePort: request.socket?.remotePort,
});

function toGatewayError(err: FastifyError | GatewayError): GatewayError {
  if (err instanceof GatewayError) return err;
  const status = err.statusCode ?? 500;
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return errors.tooLarge('The request body is larger than this endpoint accepts.');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new GatewayError(415, 'invalid_request_error', 'unsupported_media_type', `Unsupported Content-Type for this endpoint.`);
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return errors.invalid('The request body is empty; a JSON object is expected.', null, 'invalid_json');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return errors.invalid(`The request body is not valid JSON: ${err.message}`, null, 'invalid_json');
  }
  if (err instanceof SyntaxError && status === 400) return errors.invalid(`The request body is not valid JSON: ${err.message}`, null, 'invalid_json');
  if (status >= 400 && status < 500) return errors.invalid(err.message);
  return errors.internal();
}

/**
 * An error in the body the route's clients read: the OAuth protocol endpoints (token, revocation,
 * userinfo) in RFC 6749 §5.2 form, never cached; the others the part-7 body, with Anthropic's
 * `"type": "error"` envelope where the route says so.
 */
function sendError(request: FastifyRequest, reply: FastifyReply, gw: GatewayError): FastifyReply {
  const meta = routeMeta(request);
  if (meta?.auth === 'oauth-client' || meta?.auth === 'oauth-token') {
    const [status, error] = gw.status >= 500 ? [500, 'server_error'] : [400, 'invalid_request'];
    return reply.status(status).header('cache-control', 'no-store').send({ error, error_description: gw.message });
  }
  const body = gw.toBody();
  return reply.status(gw.status).send(meta?.errorEnvelope === 'anthropic' ? { type: 'error', ...body } : body);
}

export async function buildApp(services: Services, opts: AppOptions = {}): Promise<FastifyInstance> {
  const { trustProxy } = services.config;
  const app = Fastify({
    // The caller's logger, with our request serializer (it wins over Fastify's default).
    ...(opts.logger ? { loggerInstance: opts.logger.child({}, { serializers: { req: requestLogView } }) } : { logger: false }),
    bodyLimit: opts.bodyLimit ?? 20 * 1024 * 1024,
    requestIdHeader: 'x-request-id',
    genReqId: () => `req_${randomToken(20)}`,
    // Forwarded headers only from configured proxies: anyone else could name the issuer and
    // callback URLs (X-Forwarded-Host) or dodge per-address throttling (X-Forwarded-For). A hop
    // count trusts the nearest hops whatever their address (Express's meaning; Fastify would
    // ignore it), which is right only when clients cannot reach the gateway directly.
    trustProxy: typeof trustProxy === 'number' ? (_address: string, hop: number) => hop < trustProxy : trustProxy,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
  });

  app.setErrorHandler((err: FastifyError, request, reply) => {
    const gw = toGatewayError(err);
    if (gw.status >= 500 && gw.code === 'internal_error') request.log.error({ err }, 'unhandled error');
    for (const [k, v] of Object.entries(gw.headers)) reply.header(k, v);
    return sendError(request, reply, gw);
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0];
    reply.status(404).send(errors.notFound(`Unknown route: ${request.method} ${path}.`, 'not_found').toBody());
  });

  // RFC 6749 token requests are form-encoded.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });

  // Callback hooks (not async): every request runs them, and a promise each is measurable.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    services.metrics.requests.inc({ method: request.method, route, status: reply.statusCode });
    services.metrics.latency.observe({ method: request.method, route }, reply.elapsedTime / 1000);
    done();
  });

  // Cookies at the root: the web pages and the OAuth authorize endpoint (contract scope) read the session.
  await app.register(cookie, { secret: services.cookieSecret });
  await app.register(async (scope) => webRoutes(scope, services));

  const document = buildOpenApiDocument(services.version);
  app.get('/openapi.json', { logLevel: 'warn' }, async () => document);
  await app.register(swagger, { mode: 'static', specification: { document: document as never } });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { deepLinking: true, tryItOutEnabled: true } });

  // The contract's routes in a child scope: its hooks apply to them alone.
  await app.register(async (scope) => {
    scope.addHook('onRequest', authHook(services));
    initServer().registerRouter(contract, buildRouter(services), scope, {
      logInitialization: false,
      responseValidation: false,
      requestValidationErrorHandler: (err, request, reply) => {
        const [issues, where] = err.body
          ? [err.body.issues, 'body' as const]
          : err.query
            ? [err.query.issues, 'query' as const]
            : err.pathParams
              ? [err.pathParams.issues, 'path' as const]
              : [err.headers?.issues ?? [], 'headers' as const];
        const input = where === 'body' ? request.body : where === 'query' ? request.query : where === 'path' ? request.params : request.headers;
        const gw = validationError(issues as never, where, input);
        return sendError(request, reply, where === 'path' && gw.param === 'id' ? errors.notFound('No such job.', 'job_not_found', 'id') : gw);
      },
    });
  });

  return app;
}
