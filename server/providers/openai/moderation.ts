// OpenAI-format moderation: the client's body goes through with the upstream's model name.
import { postJson, upstreamLimits } from '../http.ts';
import type { ModerationAdapter } from '../types.ts';
import { openAiCall } from './client.ts';

export const openAiModeration: ModerationAdapter = {
  async moderate({ provider, upstreamModel, body }) {
    const { json } = await postJson({ provider: provider.id, ...openAiCall(provider, '/moderations'), body: { ...body, model: upstreamModel }, limits: upstreamLimits(provider) });
    return json;
  },
};
