// Moderation (docs/api.md, "Embeddings and moderation"): OpenAI-format upstreams (providers/<vendor>/moderation.ts).
import type { z } from 'zod';
import type { ModerationRequest, ModerationResponse } from '../../../contract/embeddings.ts';
import { estimateTextTokens } from '../../pipeline/estimate.ts';
import { meteredExchange, type Runner } from '../shared/upstream-exchange.ts';

export const DEFAULT_MODERATION_MODEL = 'omni-moderation-latest';

/** Moderation counts against the request rate but costs no tokens (providers do not charge for it). */
export const moderations: Runner<z.infer<typeof ModerationRequest>, z.infer<typeof ModerationResponse>> = async (services, body, { principal, requestId, log }) => {
  const model = body.model ?? DEFAULT_MODERATION_MODEL;
  // Widened to one array type: image parts have no text and count as none.
  const items: readonly (string | { type: string; text?: string })[] = typeof body.input === 'string' ? [body.input] : body.input;
  const texts = items.map((i) => (typeof i === 'string' ? i : (i.text ?? '')));
  // Reserved like its input, settled to nothing (no usage reported): it still counts as a request.
  return meteredExchange(
    services,
    { requestId, principal, model, endpoint: 'moderations', reserveTokens: estimateTextTokens(texts) },
    'moderation',
    (t, call) => t.adapter.run(body, call),
    ({ value, target }) => ({ body: value, outcome: { usage: null, provider: target.provider.id, upstreamModel: target.upstreamModel, estimated: false } }),
    log,
  );
};
