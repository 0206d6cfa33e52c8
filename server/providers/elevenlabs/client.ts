// The ElevenLabs API: where and how to call (speech and transcription adapters use it).
import type { ProviderConfig } from '../../config/schema.ts';
import { joinUrl } from '../types.ts';

type Provider = Pick<ProviderConfig, 'base_url' | 'api_key' | 'headers'>;

export const elevenLabsBaseUrl = (p: Provider) => p.base_url ?? 'https://api.elevenlabs.io/v1';

export function elevenLabsHeaders(p: Provider): Record<string, string> {
  return { ...(p.api_key ? { 'xi-api-key': p.api_key } : {}), ...p.headers };
}

export const elevenLabsCall = (p: Provider, path: string) => ({ url: joinUrl(elevenLabsBaseUrl(p), path), headers: elevenLabsHeaders(p) });
