// What every capability of one vendor shares: where its API lives, how a request is
// authenticated, and how its error bodies read. Each vendor declares this once
// (providers/<vendor>/client.ts); the capability files only add a path and a body.
import type { ProviderConfig } from '../config/schema.ts';
import { upstreamLimits, type UpstreamTarget } from '../upstream/http.ts';

/** The provider fields a vendor client reads. */
export type ProviderRef = Pick<ProviderConfig, 'type' | 'base_url' | 'api_key' | 'headers'>;

export type VendorClient = {
  baseUrl(provider: ProviderRef): string;
  /** The header(s) carrying the configured api_key. */
  auth(apiKey: string): Record<string, string>;
  /** Whether the upstream refuses every request without a credential (OpenAI-compatible servers may need none). */
  needsApiKey(provider: { type?: string }): boolean;
  /** Headers that carry a credential: a provider sending one of them in `headers` needs no api_key. */
  credentialHeaders: readonly string[];
  /** Headers of the gateway's client this vendor understands and is sent (Anthropic's version and beta flags). */
  forwarded?(clientHeaders: Record<string, string | undefined>): Record<string, string>;
  /** The readable message of this vendor's error body, when the shared reading falls short. */
  errorMessage?(text: string): string;
};

export const joinUrl = (base: string, path: string) => base.replace(/\/+$/, '') + path;

/** Every request's headers: forwarded client headers, then the credential, then the operator's own `headers` (they win). */
export function vendorHeaders(client: VendorClient, provider: ProviderRef, clientHeaders: Record<string, string | undefined> = {}): Record<string, string> {
  return { ...client.forwarded?.(clientHeaders), ...(provider.api_key ? client.auth(provider.api_key) : {}), ...provider.headers };
}

/** Where one call goes and under which limits: all but the body (and method) of an upstream request. */
export function vendorTarget(client: VendorClient, provider: ProviderConfig, path: string, clientHeaders?: Record<string, string | undefined>): UpstreamTarget {
  return {
    provider: provider.id,
    url: joinUrl(client.baseUrl(provider), path),
    headers: vendorHeaders(client, provider, clientHeaders),
    limits: upstreamLimits(provider),
    ...(client.errorMessage ? { errorMessage: client.errorMessage } : {}),
  };
}
