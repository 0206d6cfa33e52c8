// OpenAI and every OpenAI-compatible server (OpenRouter, vLLM, …): where and how to call, for all
// of their capabilities (chat, responses, embeddings, moderation, and the media ones to come).
import type { ProviderConfig } from '../../config/schema.ts';
import { joinUrl } from '../types.ts';

type Provider = Pick<ProviderConfig, 'type' | 'base_url' | 'api_key' | 'headers'>;

export const openAiBaseUrl = (p: Provider) => p.base_url ?? (p.type === 'openai' ? 'https://api.openai.com/v1' : 'http://127.0.0.1:8000/v1');

export function openAiHeaders(p: Provider): Record<string, string> {
  return { ...(p.api_key ? { authorization: `Bearer ${p.api_key}` } : {}), ...p.headers };
}

/** The URL and headers of `path` (e.g. `/embeddings`) on this provider. */
export const openAiCall = (p: Provider, path: string) => ({ url: joinUrl(openAiBaseUrl(p), path), headers: openAiHeaders(p) });
