// Moderation (spec 4.5): OpenAI-format upstreams (providers/<vendor>/moderation.ts).
import type { z } from 'zod';
import type { ModerationRequest, ModerationResponse } from '../../contract/embeddings.ts';
import type { Principal } from '../auth/principal.ts';
import type { FailoverOptions } from '../routing/failover.ts';
import { route } from '../routing/targets.ts';
import type { Services } from '../services.ts';
import { estimateTextTokens } from '../billing/estimate.ts';
import { gatewayHeaders } from './gateway-headers.ts';
import { metered } from './metered.ts';
import { exchange, type RunResult } from './upstream-exchange.ts';

type Json = Record<string, any>;

export const DEFAULT_MODERATION_MODEL = 'omni-moderation-latest';

/** Moderation counts against the request rate but costs no tokens (providers do not charge for it). */
export async function moderations(
  services: Services,
  principal: Principal,
  requestId: string,
  body: z.infer<typeof ModerationRequest>,
  log?: FailoverOptions['log'],
): Promise<RunResult<z.infer<typeof ModerationResponse>>> {
  const modelId = body.model ?? DEFAULT_MODERATION_MODEL;
  const { targets } = route(services.catalog, modelId, 'moderation');
  const texts = typeof body.input === 'string' ? [body.input] : (body.input as (string | Json)[]).map((i) => (typeof i === 'string' ? i : (i.text ?? '')));
  // Reserved like its input, settled to nothing (no usage reported): it still counts as a request.
  const r = await metered(services, { requestId, principal, model: modelId, endpoint: 'moderations', reserveTokens: estimateTextTokens(texts) }, async () => {
    const answered = await exchange(services, modelId, targets, (t, call) => t.adapter.run(body, call), log);
    return { value: answered, outcome: { usage: null, provider: answered.target.provider.id, upstreamModel: answered.target.upstreamModel, estimated: false } };
  });
  const { value, target, warnings, upstreamMs } = r.value;
  return { body: value, headers: { ...r.headers, ...gatewayHeaders(target.provider.id, warnings) }, upstreamMs, warnings };
}
