// The Anthropic API: where and how to call. The client's anthropic-version and anthropic-beta
// headers are forwarded (Claude Code sends betas the gateway does not need to know).
import type { ProviderConfig } from '../../config/schema.ts';

type Provider = Pick<ProviderConfig, 'base_url' | 'api_key' | 'headers'>;

export const ANTHROPIC_VERSION = '2023-06-01';

export const anthropicBaseUrl = (p: Provider) => p.base_url ?? 'https://api.anthropic.com/v1';

export function anthropicHeaders(p: Provider, clientHeaders: Record<string, string | undefined> = {}): Record<string, string> {
  const h: Record<string, string> = {
    'anthropic-version': clientHeaders['anthropic-version'] ?? ANTHROPIC_VERSION,
    ...(p.api_key ? { 'x-api-key': p.api_key } : {}),
  };
  const beta = clientHeaders['anthropic-beta'];
  if (beta) h['anthropic-beta'] = beta;
  return { ...h, ...p.headers };
}
