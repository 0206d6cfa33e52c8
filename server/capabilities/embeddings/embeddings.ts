// Embeddings (docs/api.md, "Embeddings and moderation"): the OpenAI shape, whatever the upstream speaks (providers/<vendor>/embeddings.ts).
import type { z } from 'zod';
import type { EmbeddingsRequest, EmbeddingsResponse } from '../../../contract/embeddings.ts';
import { estimateTextTokens } from '../../pipeline/estimate.ts';
import * as C from '../../translate/canonical.ts';
import { meteredExchange, type Runner } from '../shared/upstream-exchange.ts';

export const embeddings: Runner<z.infer<typeof EmbeddingsRequest>, z.infer<typeof EmbeddingsResponse>> = async (services, body, { principal, requestId, log }) => {
  const texts = typeof body.input === 'string' ? [body.input] : body.input;
  const estimatedTokens = estimateTextTokens(texts);
  return meteredExchange(
    services,
    { requestId, principal, model: body.model, endpoint: 'embeddings', reserveTokens: estimatedTokens },
    'embeddings',
    (t, call) => t.adapter.run({ body, texts, estimatedTokens }, call),
    ({ value, target }) => ({
      body: value.value,
      // An upstream that reports no token counts (Gemini) is billed the gateway's estimate.
      outcome: { usage: value.usage ?? { ...C.emptyUsage(), inputTokens: estimatedTokens }, provider: target.provider.id, upstreamModel: target.upstreamModel, estimated: !value.usage },
    }),
    log,
  );
};
