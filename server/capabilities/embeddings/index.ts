// Embeddings (docs/api.md, "Embeddings and moderation"): `POST /v1/embeddings`.
import type { CapabilityDescriptor } from '../descriptor.ts';
import { embeddings } from './embeddings.ts';

export const embeddingsCapability: CapabilityDescriptor = {
  routes: {
    embeddings: { capability: 'embeddings', run: async (deps, { body }, call) => ({ status: 200, ...(await embeddings(deps, body, call)) }) },
  },
};
