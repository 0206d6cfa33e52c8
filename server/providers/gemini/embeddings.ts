// Gemini embeddings (`:batchEmbedContents`), answered in OpenAI's shape. Gemini reports no token
// counts for embeddings: the answer shows the gateway's estimate, and none is reported for billing.
import { droppedFields } from '../adapter.ts';
import { encodeFloat32Base64, type EmbeddingsAdapter } from '../embeddings.ts';
import { postJson } from '../../upstream/http.ts';
import { vendorTarget } from '../vendor-client.ts';
import { asWire } from '../../upstream/json.ts';
import type * as W from './wire.ts';
import { geminiClient, modelPath } from './client.ts';

/** The request fields that have a place in Gemini's request. */
const SENT = new Set(['model', 'input', 'encoding_format', 'dimensions']);

export const geminiEmbeddings: EmbeddingsAdapter = {
  async run({ body, texts, estimatedTokens }, call) {
    const model = call.upstreamModel;
    const requests = texts.map((text) => ({ model: `models/${model}`, content: { parts: [{ text }] }, ...(body.dimensions ? { outputDimensionality: body.dimensions } : {}) }));
    const answer = await call.waitOn(
      postJson({ ...vendorTarget(geminiClient, call.provider, modelPath(model, 'batchEmbedContents')), body: { requests }, signal: call.signal }),
    );
    const json = asWire<W.BatchEmbeddings>(answer.json);
    const dropped = Object.keys(body).filter((k) => !SENT.has(k));
    if (dropped.length) call.warn(droppedFields(dropped));
    const base64 = body.encoding_format === 'base64';
    const data = (json.embeddings ?? []).map((e, index) => ({ object: 'embedding' as const, index, embedding: base64 ? encodeFloat32Base64(e.values) : e.values }));
    return { value: { object: 'list' as const, data, model: body.model, usage: { prompt_tokens: estimatedTokens, total_tokens: estimatedTokens } }, usage: null };
  },
};
