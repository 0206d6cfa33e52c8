// Speech to text (docs/api.md, "Transcription"): the upload stored as it streams in (http/audio-upload.ts), sent to
// the model's first upstream that answers, and every response format rendered by the gateway from
// the richest timing that upstream gives (transcription/render.ts). Async jobs keep the upload in
// the blob store and the rendered transcript as their download.
import { Readable } from 'node:stream';
import type { z } from 'zod';
import type { TranscriptionRequest } from '../../../contract/audio.ts';
import type { Job } from '../../../contract/jobs.ts';
import type { Principal } from '../../auth/principal.ts';
import { unitTokens } from '../../config/billing-rules.ts';
import { errors } from '../../runtime/errors.ts';
import { jobInputMissing } from '../../jobs/input.ts';
import type { JobDone, JobKind } from '../../jobs/kinds.ts';
import type { TranscriptionOutput } from '../../providers/transcription.ts';
import type { CapabilityDeps } from '../deps.ts';
import type { Caller } from '../descriptor.ts';
import { audioDuration } from '../../transcription/duration.ts';
import { render, type Granularity, type ResponseFormat } from '../../transcription/render.ts';
import { openUpload, type Upload } from './stored-upload.ts';
import { gatewayHeaders } from '../shared/gateway-headers.ts';
import { exchange } from '../../pipeline/exchange.ts';
import type { AttemptLog } from '../../pipeline/pipeline.ts';
import type { Outcome } from '../../pipeline/types.ts';

/** The form's fields as validated (ts-rest's multipart typing drops them with the file). */
export type TranscriptionBody = z.infer<typeof TranscriptionRequest>;
type Body = TranscriptionBody;
type JobObject = z.infer<typeof Job>;

export const TRANSCRIPTION_JOB = 'transcription.generation';

/** What a transcription needs besides the audio: the checked options. */
type Options = { model: string; format: ResponseFormat; granularities: Granularity[]; language: string | null; prompt: string | null; temperature: number | null };

export const ESTIMATED_WARNING = "timing estimated: the upstream gives no timestamps, so sentences are laid over the audio's duration by their length";

function options(body: Body): Options {
  const format = body.response_format ?? 'json';
  if (body.timestamp_granularities?.length && format !== 'verbose_json') {
    throw errors.invalid('timestamp_granularities needs response_format verbose_json.', 'timestamp_granularities');
  }
  return {
    model: body.model,
    format,
    granularities: body.timestamp_granularities?.length ? [...new Set(body.timestamp_granularities)] : ['segment'],
    language: body.language ?? null,
    prompt: body.prompt ?? null,
    temperature: body.temperature ?? null,
  };
}

/** Seconds of audio, from the container; when it does not say, from the size at 32 kbit/s (low for speech: a generous reservation). */
async function measure(services: CapabilityDeps, u: Upload): Promise<{ seconds: number | null; reserveSeconds: number }> {
  const seconds = await audioDuration(openUpload(services.jobs.blobs, u)(), u.mediaType, u.size);
  return { seconds, reserveSeconds: seconds ?? u.size / 4000 };
}

/** `upstream`: what X-Gateway-Upstream names (the key of a pool too). */
type Done = { out: TranscriptionOutput; provider: string; upstream: string; upstreamModel: string; warnings: string[]; upstreamMs: number; rendered: ReturnType<typeof render>; seconds: number };

/** `requestId`: whose trail the attempts go to (the request's, or the job's in a run). */
async function transcribeUpload(services: CapabilityDeps, o: Options, u: Upload, containerSeconds: number | null, requestId: string, signal?: AbortSignal, log?: AttemptLog): Promise<Done> {
  const { targets } = services.pipeline.targets(o.model, 'transcription');
  const file = { open: openUpload(services.jobs.blobs, u), size: u.size, filename: u.filename, mediaType: u.mediaType };
  const ex = await exchange(services.pipeline, o.model, targets, (t, call) => t.adapter.run({ file, language: o.language, prompt: o.prompt, temperature: o.temperature }, { ...call, signal }), {
    log,
    requestId,
    capability: 'transcription',
  });
  const out = ex.value;
  const words = out.transcript.words;
  // The audio's length: what the upstream says, else the container, else the last word's end.
  const seconds = out.reportedSeconds ?? containerSeconds ?? (words?.length ? words[words.length - 1]!.end : 0);
  const transcript = { ...out.transcript, duration: out.transcript.duration || seconds };
  const rendered = render(transcript, o.format, o.granularities, out.usageBody);
  const warnings = [...ex.warnings];
  if (rendered.estimated) warnings.push(ESTIMATED_WARNING);
  if (o.format === 'verbose_json' && o.granularities.includes('word') && !words?.length) warnings.push('word timestamps: this model gives none, so verbose_json has no words');
  return { out, provider: ex.target.provider.id, upstream: ex.upstream, upstreamModel: ex.target.upstreamModel, warnings, upstreamMs: ex.upstreamMs, rendered, seconds };
}

/** Reported tokens win; otherwise the audio minutes. */
const billingOf = (d: Done): Outcome => ({
  provider: d.provider,
  upstreamModel: d.upstreamModel,
  usage: d.out.usage,
  metered: { unit: 'audio_minute', quantity: Math.round((d.seconds / 60) * 10_000) / 10_000 },
  estimated: false,
});

function reserve(services: CapabilityDeps, model: string, seconds: number): number {
  return unitTokens(services.pipeline.model(model), 'audio_minute', Math.max(seconds, 1) / 60);
}

export type TranscriptionCall = Caller & { upload: Upload };

export async function transcription(services: CapabilityDeps, c: TranscriptionCall, body: Body): Promise<{ body: string; contentType: string; headers: Record<string, string>; upstreamMs: number }> {
  const o = options(body);
  services.pipeline.targets(o.model, 'transcription'); // the model is one, before anything is reserved
  const { seconds, reserveSeconds } = await measure(services, c.upload);
  const r = await services.pipeline.metered({ requestId: c.requestId, principal: c.principal, model: o.model, endpoint: 'transcriptions', reserveTokens: reserve(services, o.model, reserveSeconds) }, async () => {
    const d = await transcribeUpload(services, o, c.upload, seconds, c.requestId, undefined, c.log);
    return { value: d, outcome: billingOf(d) };
  });
  const d = r.value;
  return { body: d.rendered.body, contentType: d.rendered.contentType, headers: { ...r.headers, ...gatewayHeaders(d.upstream, d.warnings) }, upstreamMs: d.upstreamMs };
}

type Stored = { options: Options; upload: Upload; seconds: number | null };
/** A transcription job's stored request: the Stored submit wrote (held as JSON, unchecked when read). */
const storedRequest = (request: unknown) => request as Stored;

/** The transcription job kind, run with `services`. */
export const transcriptionJobKind = (services: CapabilityDeps): JobKind => ({
  kind: TRANSCRIPTION_JOB,
  capability: 'transcription',
  downloadPath: (id) => `/v1/audio/transcriptions/jobs/${id}/download`,
  inputs: (request) => {
    const where = storedRequest(request).upload.where;
    return 'blob' in where ? [where.blob] : [];
  },
  async run({ job, signal }): Promise<JobDone> {
    const s = storedRequest(job.request);
    const blob = 'blob' in s.upload.where ? s.upload.where.blob : null;
    // Checked before any upstream is called: a missing upload is the gateway's state, not an upstream failure.
    if (blob && !(await services.jobs.blobs.stat(blob))) throw jobInputMissing('audio upload');
    // The audio is deleted by the runner once the job's end is recorded (`inputs`).
    const d = await transcribeUpload(services, s.options, s.upload, s.seconds, job.id, signal);
    return { type: 'done', output: { body: Readable.from([Buffer.from(d.rendered.body)]), contentType: d.rendered.contentType }, billing: billingOf(d), warnings: d.warnings };
  },
});

export async function submitTranscriptionJob(services: CapabilityDeps, principal: Principal, upload: Upload, body: Body): Promise<JobObject> {
  const o = options(body);
  services.pipeline.targets(o.model, 'transcription');
  const { seconds, reserveSeconds } = await measure(services, upload);
  const stored: Stored = { options: o, upload, seconds };
  return services.jobs.submit({ principal, kind: TRANSCRIPTION_JOB, model: o.model, request: stored, sent: body, reserveTokens: reserve(services, o.model, reserveSeconds) });
}

