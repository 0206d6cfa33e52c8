// The embeddings capability's adapter types: the client's OpenAI-shaped request in, the
// OpenAI-shaped answer out, whatever the upstream speaks.
import type { z } from 'zod';
import type { EmbeddingsRequest, EmbeddingsResponse } from '../../contract/embeddings.ts';
import type { Adapter, Metered } from './adapter.ts';

export type EmbeddingsInput = {
  /** The client's body (its `model` is replaced by the upstream's). */
  body: z.infer<typeof EmbeddingsRequest>;
  texts: string[];
  /** The gateway's token estimate of `texts`, for answers whose upstream reports none. */
  estimatedTokens: number;
};

export type EmbeddingsAdapter = Adapter<EmbeddingsInput, Metered<z.infer<typeof EmbeddingsResponse>>>;

/** Little-endian float32, base64 — exactly how OpenAI encodes `encoding_format: base64`. */
export function encodeFloat32Base64(values: number[]): string {
  const buf = Buffer.alloc(values.length * 4);
  values.forEach((v, i) => buf.writeFloatLE(v, i * 4));
  return buf.toString('base64');
}
