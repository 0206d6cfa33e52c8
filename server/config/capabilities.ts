// The one table of capabilities: for each (the contract's ModelEndpoint), the unit it is billed
// in, the name of its API surface (the usage ledger's `endpoint`, the metrics' `endpoint` label:
// the path the client called, so `moderations`, `transcriptions`) and the `object` of its jobs.
// Billing rules, the ledger's type, job objects and metric labels all read it; a new capability is
// one row here (the type below refuses a capability without one).
import type { z } from 'zod';
import type { Job } from '../../contract/jobs.ts';
import type { ModelBilling, ModelEndpoint } from '../../contract/models.ts';

export type Capability = z.infer<typeof ModelEndpoint>;
export type BilledUnit = z.infer<typeof ModelBilling>['unit'];

type Row = {
  unit: BilledUnit;
  /** The API surface: the ledger's `endpoint` and the metrics' label. */
  surface: string;
  /** The `object` of this capability's jobs, when it has jobs. */
  jobObject?: z.infer<typeof Job>['object'];
  /** Its operation in OpenTelemetry's GenAI conventions (`gen_ai.operation.name`): theirs where they name one, else the surface. */
  operation: string;
};

export const CAPABILITIES = {
  chat: { unit: 'token', surface: 'chat', operation: 'chat' },
  messages: { unit: 'token', surface: 'messages', operation: 'chat' },
  responses: { unit: 'token', surface: 'responses', operation: 'chat' },
  // Gemini's API as a client format (models/{model}:generateContent and its stream).
  generate_content: { unit: 'token', surface: 'generateContent', operation: 'generate_content' },
  embeddings: { unit: 'token', surface: 'embeddings', operation: 'embeddings' },
  moderation: { unit: 'token', surface: 'moderations', operation: 'moderations' },
  images: { unit: 'image', surface: 'images', jobObject: 'image.generation.job', operation: 'images' },
  // Submitted and polled under /v1/images/generations like images (docs/api.md, "Images and video"), but named for what it makes.
  video: { unit: 'video_second', surface: 'video', jobObject: 'video.generation.job', operation: 'video' },
  speech: { unit: 'character', surface: 'speech', jobObject: 'audio.speech.job', operation: 'speech' },
  transcription: { unit: 'audio_minute', surface: 'transcriptions', jobObject: 'audio.transcription.job', operation: 'transcriptions' },
} as const satisfies Record<Capability, Row>;

/** The ledger's `endpoint`: the API surface a request used. */
export type BilledEndpoint = (typeof CAPABILITIES)[Capability]['surface'];

/** Capabilities that run as jobs. */
export type JobCapability = { [C in Capability]: (typeof CAPABILITIES)[C] extends { jobObject: string } ? C : never }[Capability];

export const surfaceOf = (capability: Capability): BilledEndpoint => CAPABILITIES[capability].surface;
/** `gen_ai.operation.name` of the capability's upstream calls. */
export const operationOf = (capability: Capability): string => CAPABILITIES[capability].operation;
export const jobObjectOf = (capability: JobCapability) => CAPABILITIES[capability].jobObject;
