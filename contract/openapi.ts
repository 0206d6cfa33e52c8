// Builds the OpenAPI 3.1 document from the ts-rest contract. ts-rest's own generator emits empty
// schemas with zod 4, so each route is registered with zod-to-openapi instead.
import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { isAppRoute, type AppRoute, type AppRouter } from '@ts-rest/core';
import { z } from 'zod';
import { contract, type RouteMeta } from './index.ts';


function* walk(router: AppRouter, prefix: string[] = []): Generator<[string, AppRoute]> {
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
  413: 'Payload too large',
  415: 'Unsupported media type',
  429: 'Rate limit, daily quota or job cap exceeded',
  500: 'Internal error',
  501: 'Not implemented yet in this release',
  502: 'All upstream providers failed',
  503: 'Upstream providers unavailable',
  524: 'A long generation outlived the connection',
};

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
  admin: { type: 'http', scheme: 'bearer', description: 'Admin token (GATEWAY_ADMIN_TOKEN or DATA_DIR/admin-token).' },
  oauthClient: { type: 'http', scheme: 'basic', description: 'OAuth client id and secret (or body fields).' },
  oauthAccessToken: { type: 'http', scheme: 'bearer', description: 'OAuth access token.' },
} as const;

const securityFor: Record<RouteMeta['auth'], Record<string, string[]>[]> = {
  none: [],
  bearer: [{ bearer: [] }],
  'bearer-or-x-api-key': [{ bearer: [] }, { xApiKey: [] }],
  admin: [{ admin: [] }],
  'oauth-client': [{ oauthClient: [] }, {}],
  'oauth-token': [{ oauthAccessToken: [] }],
};

const accountOnly =
  'Only the user’s own API keys may call this: credentials issued to an app (OAuth access tokens and the `api_key` of a grant) get 403 `app_credential_not_allowed`.';

export function buildOpenApiDocument(version = '0.1.0') {
  const registry = new OpenAPIRegistry();
  for (const [id, route] of walk(contract)) {
    const m = route.metadata as RouteMeta;
    const responses: Record<string, ReturnType<typeof responseConfig>> = {};
    for (const [status, value] of Object.entries(route.responses)) {
      responses[status] = responseConfig(Number(status), value, m, route.method);
    }
    const request: NonNullable<Parameters<typeof registry.registerPath>[0]['request']> = {};
    if (isZod(route.pathParams)) request.params = route.pathParams as z.ZodObject;
    if (isZod(route.query)) request.query = route.query as z.ZodObject;
    if (isZod(route.headers)) request.headers = route.headers as z.ZodObject;
    if (route.method !== 'GET' && 'body' in route && isZod(route.body)) {
      const type = route.contentType ?? 'application/json';
      request.body = {
        required: true,
        content:
          type === 'application/x-www-form-urlencoded'
            ? { [type]: { schema: route.body }, 'application/json': { schema: route.body } }
            : { [type]: { schema: route.body } },
      };
    }
    registry.registerPath({
      operationId: id.split('.').pop(),
      method: route.method.toLowerCase() as 'get',
      path: route.path.replace(/:([A-Za-z_]+)/g, '{$1}'),
      summary: route.summary,
      description: m.access === 'account' ? [route.description, accountOnly].filter(Boolean).join(' ') : route.description,
      tags: [m.tag],
      security: securityFor[m.auth],
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
        'One /v1 API in front of many model providers: chat completions, Messages, Responses, images and video, speech and transcription ' +
        '(with async jobs), embeddings, moderation, the model catalog with health history, usage, and an OAuth 2.0 provider with PKCE. ' +
        'Errors use the body `{error: {message, type, code, param}}`.',
      license: { name: 'UNLICENSED' },
    },
    servers: [{ url: '/', description: 'this gateway' }],
    tags: ['Text', 'Images', 'Audio', 'Embeddings and moderation', 'Models', 'Usage', 'OAuth', 'OAuth apps', 'Admin', 'Operations'].map((name) => ({ name })),
  });
  doc.components = { ...doc.components, securitySchemes: securitySchemes as never };
  return doc;
}
