// Moderation (docs/api.md, "Embeddings and moderation"): `POST /v1/moderations`.
import type { CapabilityDescriptor } from '../descriptor.ts';
import { moderations } from './moderation.ts';

export const moderationCapability: CapabilityDescriptor = {
  routes: {
    moderations: { capability: 'moderation', run: async (deps, { body }, call) => ({ status: 200, ...(await moderations(deps, body, call)) }) },
  },
};
