// Which provider types serve each kind of model the gateway implements. The endpoints pick their
// upstreams from these lists, and `config check` (server/config/warnings.ts) uses the same ones to
// report upstreams that can never serve their model. An endpoint missing here is not built yet
// (its routes answer 501), so no upstream of it is judged.
import type { ModelEndpoint } from '../../contract/models.ts';
import type { ProviderType } from '../config/schema.ts';
import type { z } from 'zod';

/** Text generation: the wire formats of server/routing/targets.ts. */
const TEXT: readonly ProviderType[] = ['openai', 'openai-compatible', 'anthropic', 'gemini'];

export const servedBy: Partial<Record<z.infer<typeof ModelEndpoint>, readonly ProviderType[]>> = {
  chat: TEXT,
  messages: TEXT,
  responses: TEXT,
  embeddings: ['openai', 'openai-compatible', 'gemini'],
  moderation: ['openai', 'openai-compatible'],
};

/** Types whose upstream refuses every request without a credential; OpenAI-compatible servers may need none. */
export const needsApiKey: ReadonlySet<ProviderType> = new Set(['openai', 'anthropic', 'gemini', 'elevenlabs']);

/** Headers that carry a credential: a provider sending one of them needs no api_key. */
export const credentialHeaders: ReadonlySet<string> = new Set(['authorization', 'x-api-key', 'x-goog-api-key', 'xi-api-key', 'api-key']);

/** Why a provider cannot be called at all (`has no api_key`), or null: failover names it and skips it. */
export function missingCredential(p: { type?: string; api_key?: string; headers?: Record<string, string> }): string | null {
  if (!p.type || !needsApiKey.has(p.type as ProviderType) || p.api_key) return null;
  return Object.keys(p.headers ?? {}).some((h) => credentialHeaders.has(h.toLowerCase())) ? null : 'has no api_key';
}
