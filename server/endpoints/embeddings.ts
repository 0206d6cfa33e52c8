// Embeddings (spec 4.5) for OpenAI-format and Gemini upstreams, and moderation (OpenAI-format).
import type { z } from 'zod';
import type { EmbeddingsRequest, ModerationRequest } from '../../contract/embeddings.ts';
import type { Principal } from '../auth/principal.ts';
import { errors } from '../http/errors.ts';
import { postJson, upstreamLimits } from '../providers/http.ts';
import { chatHeaders, defaultBaseUrl } from '../providers/openai/chat.ts';
import { geminiBaseUrl } from '../providers/gemini/generate-content.ts';
import type { CallContext } from '../providers/types.ts';
import { joinUrl } from '../providers/types.ts';
import { withFailover, type FailoverOptions } from '../routing/failover.ts';
import type { ProviderConfig } from '../config/schema.ts';
import { servedBy } from '../providers/capabilities.ts';
import type { Services } from '../services.ts';
import * as C from '../translate/canonical.ts';
import { estimateTextTokens } from '../billing/estimate.ts';
import { metered } from './metered.ts';

type Json = Record<string, any>;

/** Little-endian float32, base64 — exactly how OpenAI encodes `encoding_format: base64`. */
export function encodeFloat32Base64(values: number[]): string {
  const buf = Buffer.alloc(values.length * 4);
  values.forEach((v, i) => buf.writeFloatLE(v, i * 4));
  return buf.toString('base64');
}

const ctxFor = (provider: ProviderConfig): CallContext => ({ provider, clientHeaders: {} });

function upstreams(services: Services, modelId: string, endpoint: 'embeddings' | 'moderation') {
  const types = servedBy[endpoint]!;
  const model = services.catalog.model(modelId);
  if (!model) throw errors.modelNotFound(modelId);
  if (model.endpoint !== endpoint) throw errors.invalid(`The model '${modelId}' is a ${model.endpoint} model, not a${endpoint === 'embeddings' ? 'n embeddings' : ' moderation'} model.`, 'model', 'model_not_supported');
  const targets = model.upstreams.map((u) => ({ provider: services.catalog.providers.get(u.provider)!, upstreamModel: u.model })).filter((t) => types.includes(t.provider.type));
  if (!targets.length) throw errors.invalid(`The model '${modelId}' has no upstream that serves ${endpoint}.`, 'model', 'model_not_supported');
  return { model, targets };
}

export async function embeddings(services: Services, principal: Principal, requestId: string, body: z.infer<typeof EmbeddingsRequest>, log?: FailoverOptions['log']) {
  const { model, targets } = upstreams(services, body.model, 'embeddings');
  const texts = typeof body.input === 'string' ? [body.input] : body.input;
  const base64 = body.encoding_format === 'base64';
  return metered(services, { requestId, principal, model: body.model, endpoint: 'embeddings', reserveTokens: estimateTextTokens(texts) }, async () => {
    const { value, candidate } = await withFailover(
      targets,
      async (t): Promise<{ json: Json; usage: C.Usage | null }> => {
        if (t.provider.type === 'gemini') {
          const url = joinUrl(geminiBaseUrl(ctxFor(t.provider)), `/models/${encodeURIComponent(t.upstreamModel)}:batchEmbedContents`);
          const requests = texts.map((text) => ({ model: `models/${t.upstreamModel}`, content: { parts: [{ text }] }, ...(body.dimensions ? { outputDimensionality: body.dimensions } : {}) }));
          const { json: out } = await postJson({ provider: t.provider.id, url, headers: { ...(t.provider.api_key ? { 'x-goog-api-key': t.provider.api_key } : {}), ...t.provider.headers }, body: { requests }, limits: upstreamLimits(t.provider) });
          const data = (out.embeddings ?? []).map((e: Json, index: number) => ({ object: 'embedding', index, embedding: base64 ? encodeFloat32Base64(e.values) : e.values }));
          // Gemini reports no token counts for embeddings: the gateway estimates them.
          const tokens = estimateTextTokens(texts);
          return { json: { object: 'list', data, model: body.model, usage: { prompt_tokens: tokens, total_tokens: tokens } }, usage: null };
        }
        const ctx = ctxFor(t.provider);
        const { model: _m, ...rest } = body;
        const { json } = await postJson({ provider: t.provider.id, url: joinUrl(defaultBaseUrl(ctx), '/embeddings'), headers: chatHeaders(ctx), body: { ...rest, model: t.upstreamModel }, limits: upstreamLimits(t.provider) });
        const prompt = json.usage?.prompt_tokens;
        return { json, usage: typeof prompt === 'number' ? { inputTokens: prompt, outputTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 } : null };
      },
      { model: body.model, health: services.health, metrics: services.metrics, log },
    );
    const usage = value.usage ?? { ...C.emptyUsage(), inputTokens: estimateTextTokens(texts) };
    return { value: value.json, outcome: { usage, provider: candidate.provider.id, upstreamModel: candidate.upstreamModel, estimated: !value.usage } };
  });
}

export const DEFAULT_MODERATION_MODEL = 'omni-moderation-latest';

/** Moderation counts against the request rate but costs no tokens (providers do not charge for it). */
export async function moderations(services: Services, principal: Principal, requestId: string, body: z.infer<typeof ModerationRequest>, log?: FailoverOptions['log']) {
  const modelId = body.model ?? DEFAULT_MODERATION_MODEL;
  const { model, targets } = upstreams(services, modelId, 'moderation');
  const texts = typeof body.input === 'string' ? [body.input] : (body.input as (string | Json)[]).map((i) => (typeof i === 'string' ? i : (i.text ?? '')));
  // Reserved like its input, settled to nothing (no usage reported): it still counts as a request.
  return metered(services, { requestId, principal, model: modelId, endpoint: 'moderations', reserveTokens: estimateTextTokens(texts) }, async () => {
    const { value, candidate } = await withFailover(
      targets,
      async (t) => {
        const ctx = ctxFor(t.provider);
        const { json } = await postJson({ provider: t.provider.id, url: joinUrl(defaultBaseUrl(ctx), '/moderations'), headers: chatHeaders(ctx), body: { ...body, model: t.upstreamModel }, limits: upstreamLimits(t.provider) });
        return json as Json;
      },
      { model: modelId, health: services.health, metrics: services.metrics, log },
    );
    return { value, outcome: { usage: null, provider: candidate.provider.id, upstreamModel: candidate.upstreamModel, estimated: false } };
  });
}
