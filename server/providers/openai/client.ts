// OpenAI's API and every OpenAI-compatible server (vLLM, Ollama, OpenRouter, ...): one bearer key,
// the OpenAI error envelope. Only the default base URL and whether a key is required differ.
import type { VendorClient } from '../vendor-client.ts';

export const openaiClient: VendorClient = {
  baseUrl: (p) => p.base_url ?? (p.type === 'openai' ? 'https://api.openai.com/v1' : 'http://127.0.0.1:8000/v1'),
  auth: (key) => ({ authorization: `Bearer ${key}` }),
  needsApiKey: (p) => p.type === 'openai',
  // `api-key`: Azure OpenAI's.
  credentialHeaders: ['authorization', 'api-key'],
};
