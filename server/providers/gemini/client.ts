// The Gemini API (generativelanguage.googleapis.com): `x-goog-api-key`, models addressed in the path.
import type { VendorClient } from '../vendor-client.ts';

export const geminiClient: VendorClient = {
  baseUrl: (p) => p.base_url ?? 'https://generativelanguage.googleapis.com/v1beta',
  auth: (key) => ({ 'x-goog-api-key': key }),
  needsApiKey: () => true,
  credentialHeaders: ['x-goog-api-key', 'authorization'],
};

/** A model's path: `/models/{model}:{method}`. */
export const modelPath = (model: string, method: string) => `/models/${encodeURIComponent(model)}:${method}`;
