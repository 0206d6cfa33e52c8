// Embeddings (spec 4.5): the OpenAI shape, whatever the upstream speaks (providers/<vendor>/embeddings.ts).
import type { z } from 'zod';
import type { EmbeddingsRequest, EmbeddingsResponse } from '../../contract/embeddings.ts';
import type { Principal } from '../auth/principal.ts';
import type { FailoverOptions } from '../routing/failover.ts';
import { route } from '../routing/targets.ts';
import type { Services } from '../services.ts';
import * as C from '../translate/canonical.ts';
import { estimateTextTokens } from '../billing/estimate.ts';
import { gatewayHeaders } from './gateway-headers.ts';
import { metered } from './metered.ts';
import { exchange, type RunResult } from './upstream-exchange.ts';

export async function embeddings(
  services: Services,
  principal: Principal,
  requestId: string,
  body: z.infer<typeof EmbeddingsRequest>,
  log?: FailoverOptions['log'],
): Promise<RunResult<z.infer<typeof EmbeddingsResponse>>> {
  const { targets } = route(services.catalog, body.model, 'embeddings');
  const texts = typeof body.input === 'string' ? [body.input] : body.input;
  const estimatedTokens = estimateTextTokens(texts);
  const r = await metered(services, { requestId, principal, model: body.model, endpoint: 'embeddings', reserveTokens: estimatedTokens }, async () => {
    const answered = await exchange(services, body.model, targets, (t, call) => t.adapter.run({ body, texts, estimatedTokens }, call), log);
    const { value, target } = answered;
    const usage = value.usage ?? { ...C.emptyUsage(), inputTokens: estimatedTokens };
    return { value: answered, outcome: { usage, provider: target.provider.id, upstreamModel: target.upstreamModel, estimated: !value.usage } };
  });
  const { value, target, warnings, upstreamMs } = r.value;
  return { body: value.value, headers: { ...r.headers, ...gatewayHeaders(target.provider.id, warnings) }, upstreamMs, warnings };
}
