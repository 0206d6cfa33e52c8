// Anthropic: the Messages API for every text format.
import { allTextFormats } from '../capabilities.ts';
import type { VendorManifest } from '../manifest.ts';
import { anthropicImageTokens } from './image-tokens.ts';
import { anthropicClient } from './client.ts';
import { anthropicMessages } from './messages.ts';

export const anthropic: VendorManifest = {
  type: 'anthropic',
  client: anthropicClient,
  adapters: { ...allTextFormats(anthropicMessages) },
  genAiProviderName: 'anthropic',
  catalogVendor: 'anthropic',
  imageTokens: anthropicImageTokens,
  builtins: [
    {
      id: 'anthropic',
      env: 'ANTHROPIC_API_KEY',
      base_url: 'https://api.anthropic.com/v1',
      models: [
        { id: 'claude-sonnet-4-5', endpoint: 'messages' },
        { id: 'claude-haiku-4-5', endpoint: 'messages' },
        { id: 'claude-opus-4-1', endpoint: 'messages' },
      ],
    },
  ],
};
