// OpenAI-format embeddings (`POST /embeddings`): the client's body goes as it came, the answer back as it is.
import type { EmbeddingsAdapter } from '../embeddings.ts';
import { postJson } from '../../upstream/http.ts';
import { vendorTarget } from '../vendor-client.ts';
import { asWire } from '../../upstream/json.ts';
import type * as W from './wire.ts';
import { openaiClient } from './client.ts';

export const openAiEmbeddings: EmbeddingsAdapter = {
  async run({ body }, call) {
    const { model: _client, ...rest } = body;
    const answer = await call.waitOn(
      postJson({ ...vendorTarget(openaiClient, call.provider, '/embeddings'), body: { ...rest, model: call.upstreamModel }, signal: call.signal }),
    );
    const json = asWire<W.Embeddings>(answer.json);
    const prompt = json.usage?.prompt_tokens;
    return { value: json, usage: typeof prompt === 'number' ? { inputTokens: prompt, outputTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 } : null };
  },
};
