// Embeddings (spec 4.5) and moderation: upstreams from the registry, one metered call each, the
// upstream and the gateway's own time in headers like every endpoint.
import type { z } from 'zod';
import type { EmbeddingsRequest, ModerationRequest } from '../../contract/embeddings.ts';
import type { Principal } from '../auth/principal.ts';
import { estimateTextTokens } from '../billing/estimate.ts';
import { errors } from '../http/errors.ts';
import { withFailover, type FailoverOptions } from '../routing/failover.ts';
import { targetsFor } from '../routing/targets.ts';
import type { Services } from '../services.ts';
import * as C from '../translate/canonical.ts';
import { metered } from './metered.ts';
import { warningsHeader } from './warnings.ts';

type Json = Record<string, any>;

/** What a single-shot runner hands the router: the body, headers, and the time spent waiting on upstreams. */
export type RunResult = { body: Json; headers: Record<string, string>; upstreamMs: number };

function modelOf(services: Services, id: string) {
  const model = services.catalog.model(id);
  if (!model) throw errors.modelNotFound(id);
  return model;
}

export async function embeddings(services: Services, principal: Principal, requestId: string, body: z.infer<typeof EmbeddingsRequest>, log?: FailoverOptions['log']): Promise<RunResult> {
  const model = modelOf(services, body.model);
  const targets = targetsFor(model, 'embeddings', services.catalog.providers);
  const texts = typeof body.input === 'string' ? [body.input] : body.input;
  let upstreamMs = 0;
  const r = await metered(services, { requestId, principal, model: body.model, endpoint: 'embeddings', reserveTokens: estimateTextTokens(texts) }, async () => {
    const started = performance.now();
    const { value, candidate } = await withFailover(targets, (t) => t.adapter.embed({ provider: t.provider, upstreamModel: t.upstreamModel, body, texts }), {
      model: body.model,
      health: services.health,
      metrics: services.metrics,
      log,
    }).finally(() => (upstreamMs = performance.now() - started));
    // An upstream that reports no token counts (Gemini) is billed and answered with the gateway's estimate.
    const inputTokens = value.inputTokens ?? estimateTextTokens(texts);
    const json = value.json.usage ? value.json : { ...value.json, usage: { prompt_tokens: inputTokens, total_tokens: inputTokens } };
    return {
      value: { json, upstream: candidate.provider.id, warnings: value.warnings },
      outcome: { usage: { ...C.emptyUsage(), inputTokens }, provider: candidate.provider.id, upstreamModel: candidate.upstreamModel, estimated: value.inputTokens === null },
    };
  });
  return { body: r.value.json, headers: { ...r.headers, 'x-gateway-upstream': r.value.upstream, ...warningsHeader(r.value.warnings) }, upstreamMs };
}

export const DEFAULT_MODERATION_MODEL = 'omni-moderation-latest';

/** Moderation counts against the request rate but costs no tokens (providers do not charge for it). */
export async function moderations(services: Services, principal: Principal, requestId: string, body: z.infer<typeof ModerationRequest>, log?: FailoverOptions['log']): Promise<RunResult> {
  const modelId = body.model ?? DEFAULT_MODERATION_MODEL;
  const model = modelOf(services, modelId);
  const targets = targetsFor(model, 'moderation', services.catalog.providers);
  const texts = typeof body.input === 'string' ? [body.input] : (body.input as (string | Json)[]).map((i) => (typeof i === 'string' ? i : (i.text ?? '')));
  let upstreamMs = 0;
  // Reserved like its input, settled to nothing (no usage reported): it still counts as a request.
  const r = await metered(services, { requestId, principal, model: modelId, endpoint: 'moderations', reserveTokens: estimateTextTokens(texts) }, async () => {
    const started = performance.now();
    const { value, candidate } = await withFailover(targets, (t) => t.adapter.moderate({ provider: t.provider, upstreamModel: t.upstreamModel, body }), {
      model: modelId,
      health: services.health,
      metrics: services.metrics,
      log,
    }).finally(() => (upstreamMs = performance.now() - started));
    return { value: { json: value, upstream: candidate.provider.id }, outcome: { usage: null, provider: candidate.provider.id, upstreamModel: candidate.upstreamModel, estimated: false } };
  });
  return { body: r.value.json, headers: { ...r.headers, 'x-gateway-upstream': r.value.upstream }, upstreamMs };
}
