// Gemini embeddings (batchEmbedContents), answered in OpenAI's shape: one request per text in a
// batch, `dimensions` as outputDimensionality, base64 encoded as OpenAI does.
import { postJson, upstreamLimits } from '../http.ts';
import type { EmbeddingsAdapter } from '../types.ts';
import { geminiModelCall } from './client.ts';

/** Little-endian float32, base64: exactly how OpenAI encodes `encoding_format: base64`. */
export function encodeFloat32Base64(values: number[]): string {
  const buf = Buffer.alloc(values.length * 4);
  values.forEach((v, i) => buf.writeFloatLE(v, i * 4));
  return buf.toString('base64');
}

/** The request fields batchEmbedContents has a place for; others are dropped and named. */
const CARRIED = new Set(['model', 'input', 'encoding_format', 'dimensions']);

export const geminiEmbeddings: EmbeddingsAdapter = {
  async embed({ provider, upstreamModel, body, texts }) {
    const dropped = Object.keys(body).filter((k) => !CARRIED.has(k));
    const requests = texts.map((text) => ({ model: `models/${upstreamModel}`, content: { parts: [{ text }] }, ...(body.dimensions ? { outputDimensionality: body.dimensions } : {}) }));
    const { json: out } = await postJson({ provider: provider.id, ...geminiModelCall(provider, upstreamModel, 'batchEmbedContents'), body: { requests }, limits: upstreamLimits(provider) });
    const base64 = body.encoding_format === 'base64';
    const data = ((out.embeddings ?? []) as { values: number[] }[]).map((e, index) => ({ object: 'embedding', index, embedding: base64 ? encodeFloat32Base64(e.values) : e.values }));
    // Gemini reports no token counts for embeddings: the caller estimates them.
    return { json: { object: 'list', data, model: body.model }, inputTokens: null, warnings: dropped.length ? [`not supported by this model's provider, dropped: ${dropped.join(', ')}`] : [] };
  },
};
