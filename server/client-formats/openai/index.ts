// OpenAI's API, the gateway's own shape (chat completions, Responses, embeddings, images, audio,
// moderation, the catalog): the common error body, the key as `Authorization: Bearer`.
import type { ClientFormatSpec } from '../spec.ts';

export const openaiClientFormat: ClientFormatSpec = {
  name: 'openai',
  errorBody: (gw) => gw.toBody(),
};
