// The Gemini API (generativelanguage): where and how to call, for all of its capabilities.
import type { ProviderConfig } from '../../config/schema.ts';
import { joinUrl } from '../types.ts';

type Provider = Pick<ProviderConfig, 'base_url' | 'api_key' | 'headers'>;

export const geminiBaseUrl = (p: Provider) => p.base_url ?? 'https://generativelanguage.googleapis.com/v1beta';

export function geminiHeaders(p: Provider): Record<string, string> {
  return { ...(p.api_key ? { 'x-goog-api-key': p.api_key } : {}), ...p.headers };
}

/** The URL and headers of a model's method (`generateContent`, `batchEmbedContents?…`). */
export const geminiModelCall = (p: Provider, model: string, method: string) => ({
  url: joinUrl(geminiBaseUrl(p), `/models/${encodeURIComponent(model)}:${method}`),
  headers: geminiHeaders(p),
});
