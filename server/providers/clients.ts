// The vendor client of each provider type: one place answers "how is this provider called".
import type { ProviderType } from '../config/schema.ts';
import { anthropicClient } from './anthropic/client.ts';
import { elevenlabsClient } from './elevenlabs/client.ts';
import { geminiClient } from './gemini/client.ts';
import { openaiClient } from './openai/client.ts';
import type { VendorClient } from './vendor-client.ts';

export const clients: Record<ProviderType, VendorClient> = {
  openai: openaiClient,
  'openai-compatible': openaiClient,
  anthropic: anthropicClient,
  gemini: geminiClient,
  elevenlabs: elevenlabsClient,
};
