// Images and video (docs/api.md, "Images and video"): `POST /v1/images/generations` (a video model answers with a job)
// and the job's status at `GET /v1/images/generations/{id}`.
import type { CapabilityDescriptor } from '../descriptor.ts';
import { generateMedia, imageJob, mediaJobKinds } from './generate.ts';

export const mediaCapability: CapabilityDescriptor = {
  routes: {
    imageGenerations: {
      capability: 'images',
      run: (deps, { body }, call) => generateMedia(deps, call, body),
    },
    imageJob: { capability: 'images', run: async (deps, { params }, call) => ({ status: 200, body: await imageJob(deps, call.principal, params.id, call.origin()) }) },
  },
  jobKinds: mediaJobKinds,
};
