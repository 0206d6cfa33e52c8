// Builds the OpenAPI 3.1 document from the ts-rest contract. ts-rest's own generator emits empty
// schemas with zod 4, so each route is registered with zod-to-openapi instead.
import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { isAppRoute, type AppRoute, type AppRouter } from '@ts-rest/core';
import { z } from 'zod';
import { ErrorBody, MessagesErrorBody, OAuthErrorBody, VersionedErrorBody } from './errors.ts';
import { GeminiErrorBody } from './gemini.ts';
import { contract, type RouteMeta } from './index.ts';

/** Every route of `router`, with its id (`inference.chatCompletions`). */
export function* walk(router: AppRouter, prefix: string[] = []): Generator<[string, AppRoute]> {
  for (const [name, value] of Object.entries(router)) {
    if (isAppRoute(value)) yield [[...prefix, name].join('.'), value];
    else yield* walk(value as AppRouter, [...prefix, name]);
  }
}

const statusText: Record<number, string> = {
  200: 'OK',
  201: 'Created',
  202: 'Accepted (a job was created)',
  302: 'Redirect',
  400: 'Invalid request',
  401: 'Missing or invalid credentials',
  403: 'Not permitted',
  404: 'Not found',
  409: 'Conflict / not ready',
  408: 'The request was not received in time',
  413: 'Payload too large',
  414: 'A path segment is longer than any id (100 characters)',
  415: 'Unsupported media type',
  429: 'Rate limit, daily quota or job cap exceeded',
  431: 'Request headers too large (16 KiB in all)',
  500: 'Internal error',
  502: 'All upstream providers failed',
  503: 'Upstream providers unavailable, or a store the gateway needs (database, counter store) is unreachable: retry after Retry-After',
  524: 'A long generation outlived the connection',
};

/**
 * Statuses the server produces around any route, beyond what its handler returns: malformed
 * requests (bad percent-encoding, broken headers: 400), oversized headers (431), an over-long path
 * parameter (414), a body of the wrong media type (415), internal errors (500) and, where
 * credentials are checked, an unreachable database or counter store (503), in the body family the
 * route's own errors use.
 */
function frameworkStatuses(route: AppRoute, m: RouteMeta): number[] {
  const statuses = [400, 431, 500];
  if (m.auth !== 'none' || m.errorEnvelope === 'page') statuses.push(503);
  if (route.pathParams || m.documented?.params) statuses.push(414);
  if (route.method !== 'GET' && 'body' in route && isZod(route.body)) statuses.push(415);
  return statuses;
}

function errorFamily(route: AppRoute, m: RouteMeta): z.ZodType | null {
  if (m.errorEnvelope === 'page') return null;
  if (m.auth === 'oauth-client' || m.auth === 'oauth-token') return OAuthErrorBody;
  if (m.errorEnvelope === 'google') return GeminiErrorBody;
  if (m.errorEnvelope === 'marked') return VersionedErrorBody;
  return m.errorEnvelope === 'anthropic' ? MessagesErrorBody : ErrorBody;
}

/**
 * Oversized headers are refused by the HTTP parser before any route is known: the route's own error
 * family when the request line could be read (headers sent in one piece), the common body otherwise.
 */
function headersTooLarge(family: z.ZodType | null): z.ZodType {
  return family === OAuthErrorBody || family === GeminiErrorBody ? z.union([family, ErrorBody]) : ErrorBody;
}

function isZod(x: unknown): x is z.ZodType {
  return x instanceof z.ZodType;
}

function responseConfig(status: number, value: unknown, m: RouteMeta, method: string) {
  const description = statusText[status] ?? String(status);
  const content: Record<string, { schema: z.ZodType | Record<string, unknown> }> = {};
  const raw = m.raw?.[status];
  if (raw) {
    for (const [type, what] of Object.entries(raw)) {
      content[type] = {
        schema: isZod(what)
          ? what
          : type.startsWith('text/')
            ? { type: 'string', description: what }
            : { type: 'string', format: 'binary', description: what },
      };
    }
  }
  if (isZod(value)) {
    content['application/json'] = { schema: value };
    if (status === 200 && m.stream && method === 'POST') {
      content['text/event-stream'] = { schema: m.stream };
    }
  } else if (value && typeof value === 'object' && 'contentType' in value && !raw) {
    const v = value as { contentType: string; body: unknown };
    content[v.contentType] = { schema: isZod(v.body) ? v.body : { type: 'string' } };
  }
  return Object.keys(content).length ? { description, content } : { description };
}

const securitySchemes = {
  bearer: { type: 'http', scheme: 'bearer', description: 'API key (`mg-…`) or OAuth access token.' },
  xApiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'API key, Messages endpoint only.' },
  xGoogApiKey: { type: 'apiKey', in: 'header', name: 'x-goog-api-key', description: 'API key or OAuth access token, Gemini-format routes only.' },
  keyQuery: { type: 'apiKey', in: 'query', name: 'key', description: 'API key or OAuth access token as a query parameter, Gemini-format routes only.' },
  admin: { type: 'http', scheme: 'bearer', description: 'Admin token (GATEWAY_ADMIN_TOKEN or DATA_DIR/admin-token).' },
  oauthClient: { type: 'http', scheme: 'basic', description: 'OAuth client id and secret (or body fields).' },
  oauthAccessToken: { type: 'http', scheme: 'bearer', description: 'OAuth access token.' },
  session: { type: 'apiKey', in: 'cookie', name: 'mg_session', description: 'The dashboard’s sign-in session (HTTP-only, SameSite=Lax), set by /signin.' },
  csrf: {
    type: 'apiKey',
    in: 'header',
    name: 'X-CSRF-Token',
    description: 'With the session cookie, POST, PATCH and DELETE need the session’s CSRF token (`csrf_token` of GET /v1/session); without it they answer 403 `csrf_token_invalid`.',
  },
} as const;

const securityFor: Record<RouteMeta['auth'], Record<string, string[]>[]> = {
  none: [],
  bearer: [{ bearer: [] }],
  'bearer-or-x-api-key': [{ bearer: [] }, { xApiKey: [] }],
  google: [{ xGoogApiKey: [] }, { keyQuery: [] }, { bearer: [] }],
  admin: [{ admin: [] }],
  'oauth-client': [{ oauthClient: [] }, {}],
  'oauth-token': [{ oauthAccessToken: [] }],
  session: [{ session: [] }],
};

/** The route's own schemes, and the session (with its CSRF token on unsafe methods) where it is accepted too. */
function securityOf(m: RouteMeta, method: string): Record<string, string[]>[] {
  if (m.auth === 'session') return method === 'GET' ? securityFor.session : [{ session: [], csrf: [] }];
  if (!m.session) return securityFor[m.auth];
  return [...securityFor[m.auth], method === 'GET' ? { session: [] } : { session: [], csrf: [] }];
}

const accountOnly =
  'Only the user’s own API keys may call this: credentials issued to an app (OAuth access tokens and the `api_key` of a grant) get 403 `app_credential_not_allowed`.';

export function buildOpenApiDocument(version = '0.1.0') {
  const registry = new OpenAPIRegistry();
  for (const [id, route] of walk(contract)) {
    const m = route.metadata as RouteMeta;
    const responses: Record<string, ReturnType<typeof responseConfig>> = {};
    for (const [status, value] of Object.entries({ ...route.responses, ...m.documented?.responses })) {
      responses[status] = responseConfig(Number(status), value, m, route.method);
    }
    const family = errorFamily(route, m);
    for (const status of frameworkStatuses(route, m)) {
      if (responses[status]) continue;
      if (status === 431) responses[status] = responseConfig(status, headersTooLarge(family), m, route.method);
      else responses[status] = family
        ? responseConfig(status, family, m, route.method)
        : { description: statusText[status]!, content: { 'text/html': { schema: { type: 'string', description: 'error page' } } } };
    }
    const request: NonNullable<Parameters<typeof registry.registerPath>[0]['request']> = {};
    const params = m.documented?.params ?? route.pathParams;
    if (isZod(params)) request.params = params as z.ZodObject;
    if (isZod(route.query)) request.query = route.query as z.ZodObject;
    if (isZod(route.headers)) request.headers = route.headers as z.ZodObject;
    const body = m.documented?.body ?? ('body' in route ? route.body : undefined);
    if (route.method !== 'GET' && 'body' in route && isZod(body)) {
      const type = route.contentType ?? 'application/json';
      request.body = {
        required: true,
        content: type === 'application/x-www-form-urlencoded' ? { [type]: { schema: body }, 'application/json': { schema: body } } : { [type]: { schema: body } },
      };
    }
    registry.registerPath({
      operationId: id.split('.').pop(),
      method: route.method.toLowerCase() as 'get',
      path: m.documented?.path ?? route.path.replace(/:([A-Za-z_]+)/g, '{$1}'),
      summary: route.summary,
      description: m.access === 'account' ? [route.description, accountOnly].filter(Boolean).join(' ') : route.description,
      tags: [m.tag],
      security: securityOf(m, route.method),
      request,
      responses,
    });
  }
  const doc = new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Model Gateway API',
      version,
      description:
        'Model Gateway is a self-hostable gateway that puts many model providers (OpenAI, Anthropic, Google Gemini, ElevenLabs, OpenRouter and any ' +
        'OpenAI-compatible server) behind one `/v1` API: chat completions, Messages and Responses for every text model, embeddings, moderation, ' +
        'images and video (sync and as jobs), speech with pronunciation dictionaries, transcription into every subtitle format, ' +
        'the model catalog with its health history, per-key usage, and an OAuth 2.0 provider with PKCE.\n\n' +
        '**Authentication:** `Authorization: Bearer <API key>` (keys look like `mg-…`) or an OAuth access token; `/v1/messages` also takes ' +
        '`x-api-key`, the Gemini-format routes (`/v1beta/models/…`) `x-goog-api-key` or `?key=`. **Errors** use the body `{"error": {"message", "type", "code", "param"}}` (`/v1/messages`, and the catalog with `anthropic-version`, add `"type": "error"`; ' +
        'the Gemini-format routes answer Google’s `{"error": {"code", "message", "status"}}`; the OAuth protocol endpoints use `{"error", "error_description"}`). The user guide, with examples for every endpoint, is served by this gateway at [`/docs/guide`](/docs/guide).',
      // No licence: the project is private and states none (package.json), so none is claimed here.
    },
    servers: [{ url: '/', description: 'This gateway (the server that serves this document)' }],
    tags: ['Text', 'Images', 'Audio', 'Embeddings and moderation', 'Models', 'Usage', 'OAuth', 'OAuth apps', 'Dashboard', 'Admin', 'Operations'].map((name) => ({ name })),
  });
  doc.components = { ...doc.components, securitySchemes: securitySchemes as never };
  return nullableRefs(doc);
}

/**
 * zod-to-openapi writes a nullable reference as `allOf: [{$ref}, {type: [object, null]}]`, which
 * no null satisfies (the referenced schema is an object); `anyOf: [{$ref}, {type: null}]` says what
 * the schema means (e.g. the `usage: null` of every OpenAI stream chunk).
 */
function nullableRefs<T>(node: T): T {
  if (Array.isArray(node)) return node.map(nullableRefs) as T;
  if (!node || typeof node !== 'object') return node;
  const o = node as Record<string, unknown>;
  const all = o.allOf as Record<string, unknown>[] | undefined;
  if (all?.length === 2 && all[0]?.$ref && Array.isArray(all[1]?.type) && (all[1]!.type as string[]).includes('null') && Object.keys(all[1]!).length === 1) {
    const { allOf: _, ...rest } = o;
    return { ...nullableRefs(rest), anyOf: [all[0], { type: 'null' }] } as T;
  }
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, nullableRefs(v)])) as T;
}
