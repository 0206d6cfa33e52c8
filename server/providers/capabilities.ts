// Credentials, and which provider types serve a capability (from the registry): what failover,
// `config check` and start-up warnings judge providers by.
import type { ProviderType } from '../config/schema.ts';
import { builtCapabilities, registry, type Capability } from './registry.ts';

/** The provider types that can serve `capability`, or null for a capability not built yet (its routes answer 501). */
export function typesServing(capability: Capability): ProviderType[] | null {
  if (!builtCapabilities().includes(capability)) return null;
  return (Object.keys(registry) as ProviderType[]).filter((t) => registry[t][capability] !== undefined);
}

/** Types whose upstream refuses every request without a credential; OpenAI-compatible servers may need none. */
export const needsApiKey: ReadonlySet<ProviderType> = new Set(['openai', 'anthropic', 'gemini', 'elevenlabs']);

/** Headers that carry a credential: a provider sending one of them needs no api_key. */
export const credentialHeaders: ReadonlySet<string> = new Set(['authorization', 'x-api-key', 'x-goog-api-key', 'xi-api-key', 'api-key']);

/** Why a provider cannot be called at all (`has no api_key`), or null: failover names it and skips it. */
export function missingCredential(p: { type?: string; api_key?: string; headers?: Record<string, string> }): string | null {
  if (!p.type || !needsApiKey.has(p.type as ProviderType) || p.api_key) return null;
  return Object.keys(p.headers ?? {}).some((h) => credentialHeaders.has(h.toLowerCase())) ? null : 'has no api_key';
}
