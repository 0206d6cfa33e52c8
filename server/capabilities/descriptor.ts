// The one shape of a capability: the contract routes it serves (each with the row of the
// capability table it is billed and measured under, and what runs it), and the job kinds it runs.
// The HTTP layer binds every descriptor the same way (http/router.ts); capabilities/index.ts lists them.
import type { Readable } from 'node:stream';
import type { ServerInferRequest, ServerInferResponses } from '@ts-rest/core';
import type { z } from 'zod';
import type { contract } from '../../contract/index.ts';
import type { GenerationTimeoutBody } from '../../contract/jobs.ts';
import type { Principal } from '../auth/principal.ts';
import type { Capability } from '../config/capabilities.ts';
import type { JobKind } from '../jobs/kinds.ts';
import type { AttemptLog } from '../pipeline/pipeline.ts';
import type { FormatLabel } from '../pipeline/concern.ts';
import type { CapabilityDeps } from './deps.ts';
import type { Upload } from './transcription/stored-upload.ts';

/** The routes capabilities serve: the contract's inference area. */
export type Inference = typeof contract.inference;
export type InferenceRoute = keyof Inference;

/** The request's logger: upstream failures' raw causes (warn), the gateway's own failures mid-stream (error). */
export type RequestLog = AttemptLog & { error(obj: object, msg: string): void };

/** Who calls and how: what the HTTP layer hands every capability route besides the validated input. */
export type CallInfo = {
  principal: Principal;
  requestId: string;
  /** The request's headers (a vendor's own, such as `anthropic-beta`, are forwarded where they apply). */
  headers: Record<string, string | string[] | undefined>;
  /** The origin the links made for this request start with (hosted files, job downloads). */
  origin(): string;
  /** The audio a multipart route received (`upload` below), stored as it streamed in. */
  upload?: Upload;
  log?: RequestLog;
};

/** What a capability's runner reads of the call: who, under which request id, logged where. */
export type Caller = Pick<CallInfo, 'principal' | 'requestId' | 'log'>;

/** How an answer is sent besides its status and body. */
export type AnswerMeta = {
  headers?: Record<string, string>;
  /** Time spent waiting on upstreams: the rest of the request's time is the gateway's (X-Gateway-Overhead-Ms, the overhead histogram). */
  upstreamMs?: number;
  /** The content type of a body that is not JSON (audio, subtitles, a job's download). */
  contentType?: string;
  contentLength?: number | null;
};

/**
 * A body streamed as the client reads it (SSE, audio), already serialised, or encoded by a text
 * format's encoder (translate/*: its shape is the client format's, checked by that format's tests):
 * the contract documents the JSON it carries.
 */
export type StreamedAnswer = { status: 200; body: Readable | string | Readonly<Record<string, unknown>> };

/** The contract's 524 (a synchronous request that became a job): ts-rest types no status above 511. */
export type TimeoutAnswer = { status: 524; body: z.infer<typeof GenerationTimeoutBody> };

export type Answer<R extends InferenceRoute> = (ServerInferResponses<Inference[R]> | StreamedAnswer | TimeoutAnswer) & AnswerMeta;

export type RouteBinding<R extends InferenceRoute> = {
  /** The row of the capability table this route is billed and measured under. */
  capability: Capability;
  /** The client format's label in the request log and traces (a text format's `label`); absent: the gateway's own, OpenAI's shape. */
  format?: FormatLabel;
  /** A multipart route: its file is stored (`'file'`: a temporary file for this request, `'blob'`: kept for a job) before validation. */
  upload?: 'file' | 'blob';
  run(deps: CapabilityDeps, input: ServerInferRequest<Inference[R]>, call: CallInfo): Promise<Answer<R>>;
};

export type CapabilityDescriptor = {
  routes: { [R in InferenceRoute]?: RouteBinding<R> };
  /** The job kinds it runs, made with the dependencies they run with (added to the instance's JobKinds at start-up). */
  jobKinds?(deps: CapabilityDeps): JobKind[];
};
