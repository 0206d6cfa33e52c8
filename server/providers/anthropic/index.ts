// Anthropic: the Messages API for every text format.
import { allTextFormats } from '../capabilities.ts';
import type { VendorManifest } from '../manifest.ts';
import { anthropicClient } from './client.ts';
import { anthropicMessages } from './messages.ts';

export const anthropic: VendorManifest = {
  type: 'anthropic',
  client: anthropicClient,
  adapters: { ...allTextFormats(anthropicMessages) },
  catalogVendor: 'anthropic',
};
