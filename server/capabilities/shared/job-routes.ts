// The routes every job-running capability has: a job's status and its output's download, each
// limited to that capability's job kinds.
import type { Readable } from 'node:stream';
import type { z } from 'zod';
import type { Job } from '../../../contract/jobs.ts';
import type { Capability } from '../../config/capabilities.ts';
import type { AnswerMeta, CallInfo } from '../descriptor.ts';
import type { CapabilityDeps } from '../deps.ts';

type ById = { params: { id: string } };

export const jobStatusRoute = (capability: Capability, kinds: readonly string[]) => ({
  capability,
  run: async (deps: CapabilityDeps, { params }: ById, call: CallInfo): Promise<{ status: 200; body: z.infer<typeof Job> }> => ({
    status: 200,
    body: await deps.jobs.status(call.principal, params.id, kinds),
  }),
});

/** A finished job's output, streamed with its own content type. */
export const jobDownloadRoute = (capability: Capability, kinds: readonly string[]) => ({
  capability,
  run: async (deps: CapabilityDeps, { params }: ById, call: CallInfo): Promise<{ status: 200; body: Readable } & AnswerMeta> => {
    const out = await deps.jobs.download(call.principal, params.id, kinds);
    return { status: 200, body: out.body, contentType: out.contentType, contentLength: out.size };
  },
});
