// Anthropic's API: `x-api-key`, a dated API version (the client's own when it sent one) and beta flags.
import type { VendorClient } from '../vendor-client.ts';

export const ANTHROPIC_VERSION = '2023-06-01';

export const anthropicClient: VendorClient = {
  baseUrl: (p) => p.base_url ?? 'https://api.anthropic.com/v1',
  auth: (key) => ({ 'x-api-key': key }),
  needsApiKey: () => true,
  credentialHeaders: ['x-api-key', 'authorization'],
  forwarded: (h) => ({ 'anthropic-version': h['anthropic-version'] ?? ANTHROPIC_VERSION, ...(h['anthropic-beta'] ? { 'anthropic-beta': h['anthropic-beta'] } : {}) }),
};
