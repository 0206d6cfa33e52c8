// A thin typed client for the Model Gateway API. Types come from the gateway's OpenAPI document
// (src/schema.ts, generated); requests go through openapi-fetch.
import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { components, paths } from './schema.js';

export type { components, paths, operations } from './schema.js';
/** Every named schema of the API, e.g. `Schemas['CatalogEntry']`. */
export type Schemas = components['schemas'];
export type GatewayClient = Client<paths>;

export type GatewayClientOptions = Omit<ClientOptions, 'baseUrl'> & {
  /** The gateway's address, e.g. `http://localhost:8080` (without `/v1`). */
  baseUrl: string;
  /** An API key (`mg-…`) or OAuth access token, sent as `Authorization: Bearer …`. */
  apiKey?: string;
  /**
   * In a browser page on the gateway's own origin, without `apiKey`: the dashboard's session cookie
   * authenticates, and this CSRF token (`csrf_token` of `GET /v1/session`, or a function returning
   * the current one) is sent as `X-CSRF-Token` on POST, PUT, PATCH and DELETE.
   */
  csrfToken?: string | (() => string | undefined);
};

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export function createGatewayClient({ baseUrl, apiKey, csrfToken, headers, ...rest }: GatewayClientOptions): GatewayClient {
  const auth: Record<string, string> = apiKey ? { authorization: `Bearer ${apiKey}` } : {};
  const client = createClient<paths>({
    baseUrl: baseUrl.replace(/\/+$/, ''),
    headers: { ...auth, ...(headers as Record<string, string> | undefined) },
    ...(csrfToken !== undefined && { credentials: 'same-origin' as const }),
    ...rest,
  });
  if (csrfToken !== undefined) {
    client.use({
      onRequest({ request }) {
        const token = typeof csrfToken === 'function' ? csrfToken() : csrfToken;
        if (token && UNSAFE.has(request.method)) request.headers.set('x-csrf-token', token);
        return request;
      },
    });
  }
  return client;
}

/** The part-7 error body, for narrowing `error` results. */
export type GatewayErrorBody = components['schemas']['ErrorBody'];
