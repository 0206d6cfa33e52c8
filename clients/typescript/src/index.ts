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
};

export function createGatewayClient({ baseUrl, apiKey, headers, ...rest }: GatewayClientOptions): GatewayClient {
  const auth: Record<string, string> = apiKey ? { authorization: `Bearer ${apiKey}` } : {};
  return createClient<paths>({
    baseUrl: baseUrl.replace(/\/+$/, ''),
    headers: { ...auth, ...(headers as Record<string, string> | undefined) },
    ...rest,
  });
}

/** The part-7 error body, for narrowing `error` results. */
export type GatewayErrorBody = components['schemas']['ErrorBody'];
