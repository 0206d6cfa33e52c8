// OpenAI-format embeddings: the client's body goes through with the upstream's model name.
import { postJson, upstreamLimits } from '../http.ts';
import type { EmbeddingsAdapter } from '../types.ts';
import { openAiCall } from './client.ts';

export const openAiEmbeddings: EmbeddingsAdapter = {
  async embed({ provider, upstreamModel, body }) {
    const { model: _client, ...rest } = body;
    const { json } = await postJson({ provider: provider.id, ...openAiCall(provider, '/embeddings'), body: { ...rest, model: upstreamModel }, limits: upstreamLimits(provider) });
    const prompt = json.usage?.prompt_tokens;
    return { json, inputTokens: typeof prompt === 'number' ? prompt : null, warnings: [] };
  },
};
