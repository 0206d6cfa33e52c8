// Images and video (docs/api.md, "Images and video"): one endpoint for generation, editing (reference images) and video.
// Image models answer synchronously unless `sync: false`; video models always run as a job. Every
// image or video is stored and handed out as a hosted, signed link (/v1/files/…), so a client
// never gets a provider's short-lived URL or one that needs the provider's key. A synchronous
// request that outlives `jobs.sync_timeout_seconds` becomes the job that finishes it (billed once).
import { Readable } from 'node:stream';
import type { z } from 'zod';
import type { ImageGenerationRequest, ImagesResponse } from '../../../contract/images.ts';
import type { GenerationTimeoutBody, Job } from '../../../contract/jobs.ts';
import type { Principal } from '../../auth/principal.ts';
import { unitTokens } from '../../config/billing-rules.ts';
import { jobObjectOf } from '../../config/capabilities.ts';
import { GatewayError, errors } from '../../runtime/errors.ts';
import type { JobDone, JobKind, JobRecheck, JobRecord } from '../../jobs/kinds.ts';
import { jobOutputKey } from '../../jobs/deps.ts';
import { jobOrigin } from '../../jobs/service.ts';
import { mp4Duration } from '../../media/mp4-duration.ts';
import { loadReferences } from '../../media/references.ts';
import { parseMediaRequest, type MediaRequest } from '../../media/request.ts';
import type { AdapterCall } from '../../providers/adapter.ts';
import type { GeneratedImage } from '../../providers/media.ts';
import { adapterFor } from '../../providers/registry.ts';
import { upstreamFailure } from '../../upstream/errors.ts';
import type { CapabilityDeps } from '../deps.ts';
import type { CallInfo, Caller } from '../descriptor.ts';
import { gatewayHeaders } from '../shared/gateway-headers.ts';
import { syncOrJob } from '../shared/sync-or-job.ts';
import { exchange } from '../../pipeline/exchange.ts';
import type { AttemptLog } from '../../pipeline/pipeline.ts';
import type { Target } from '../../pipeline/types.ts';

type Body = z.infer<typeof ImageGenerationRequest>;
type ImagesBody = z.infer<typeof ImagesResponse>;
type JobObject = z.infer<typeof Job>;
type Media = 'images' | 'video';

export const IMAGE_JOB = 'images.generation';
export const VIDEO_JOB = 'video.generation';
export const MEDIA_JOBS = [IMAGE_JOB, VIDEO_JOB] as const;

/** What a media job stores as its request: the normalized request and what normalizing it changed. */
type Stored = { req: MediaRequest; warnings: string[] };

/** A video job between its checks: the operation it waits on, where. */
/** `keyIndex`: the key of the provider's pool that started the operation (absent in states stored before pools). */
type VideoState = { provider: string; keyIndex?: number; upstreamModel: string; operation: string; seconds: number; warnings: string[]; failures: number };

/** Consecutive failed checks of a running video (network, 5xx) before the job fails. */
const MAX_POLL_FAILURES = 5;

/** The model's upstreams able to take `references` reference images; 400 naming the model when none can. */
function mediaTargets<C extends Media>(services: CapabilityDeps, modelId: string, capability: C, references: number): Target<C>[] {
  const { targets } = services.pipeline.targets(modelId, capability);
  if (!references) return targets;
  const max = (t: Target<C>) => t.adapter.maxReferences(t.upstreamModel);
  const able = targets.filter((t) => max(t) >= references);
  if (able.length) return able;
  const most = Math.max(...targets.map(max));
  if (most === 0) throw errors.invalid(`The model '${modelId}' cannot edit images or take reference images: send no image_url, or use a model that can.`, 'image_url', 'model_cannot_edit');
  throw errors.invalid(`The model '${modelId}' takes at most ${most} reference image${most > 1 ? 's' : ''}; ${references} were sent.`, 'image_url', 'too_many_images');
}

/** A stored file's signed link, relative to the gateway (made absolute when answered: withOrigin). */
function hostedUrl(services: CapabilityDeps, key: string): string {
  return `/v1/files/${services.urls.sign(key, services.clock.now() + services.config.jobs.retention_hours * 3_600_000)}`;
}

/** Relative hosted links made absolute for the client. */
export function withOrigin<T>(value: T, origin: string): T {
  const fix = (r: unknown) => {
    const data = (r as { data?: { url?: string }[] } | null)?.data;
    if (!Array.isArray(data)) return r;
    return { ...(r as object), data: data.map((d) => (typeof d.url === 'string' && d.url.startsWith('/') ? { ...d, url: origin + d.url } : d)) };
  };
  const v = value as { object?: string; result?: unknown };
  return (v && (v.object === jobObjectOf('images') || v.object === jobObjectOf('video')) ? { ...v, result: fix(v.result) } : fix(value)) as T;
}

/** A media type as the upstream named it, when it is one of `kind`; else a neutral one (it is served from the gateway's origin). */
const mediaType = (given: string | null | undefined, kind: 'image' | 'video', fallback: string) => {
  const t = (given ?? '').split(';')[0]!.trim().toLowerCase();
  return new RegExp(`^${kind}/[a-z0-9.+-]+$`).test(t) ? t : fallback;
};

async function hostImage(services: CapabilityDeps, jobId: string, image: GeneratedImage) {
  const key = jobOutputKey(jobId);
  await services.jobs.blobs.put(key, Readable.from([image.data]), image.contentType);
  return { key, url: hostedUrl(services, key) };
}

/**
 * One image, from the first upstream that makes it; stored, and answered as the request asked.
 * `requestId`: whose trail its attempts go to (the request's when answered at once, the job's in a run).
 */
async function makeImage(services: CapabilityDeps, jobId: string, model: string, stored: Stored, signal: AbortSignal, log?: AttemptLog, requestId: string = jobId): Promise<JobDone & { upstream: string; upstreamMs: number }> {
  const { req } = stored;
  const targets = mediaTargets(services, model, 'images', req.references.length);
  const references = await loadReferences(services, req.references);
  const ex = await exchange(services.pipeline, model, targets, (t, call) => t.adapter.run({ req, references }, { ...call, signal }), { log, requestId, capability: 'images' });
  const { usage, usageBody } = ex.value;
  const image = { ...ex.value.image, contentType: mediaType(ex.value.image.contentType, 'image', 'application/octet-stream') };
  const hosted = await hostImage(services, jobId, image);
  const entry: ImagesBody['data'][number] = { url: hosted.url, content_type: image.contentType };
  if (req.responseFormat === 'b64_json') entry.b64_json = image.data.toString('base64');
  if (image.revisedPrompt) entry.revised_prompt = image.revisedPrompt;
  const result: ImagesBody = { created: Math.floor(services.clock.now() / 1000), data: [entry], ...(usageBody ? { usage: usageBody } : {}) };
  return {
    type: 'done',
    result,
    outputKey: hosted.key,
    billing: { provider: ex.target.provider.id, upstreamModel: ex.target.upstreamModel, usage, metered: { unit: 'image', quantity: 1 }, estimated: false },
    warnings: [...stored.warnings, ...ex.warnings],
    upstream: ex.upstream,
    upstreamMs: ex.upstreamMs,
  };
}

/** A stored video's duration from its movie header (to 0.1 s), or null when the file does not say. */
async function containerDuration(services: CapabilityDeps, key: string): Promise<number | null> {
  const blob = await services.jobs.blobs.get(key);
  if (!blob) return null;
  try {
    const d = await mp4Duration(blob.body);
    return d !== null && Number.isFinite(d) && d > 0 ? Math.round(d * 10) / 10 : null;
  } catch {
    return null;
  } finally {
    blob.body.destroy();
  }
}

/** A media job's stored request: the Stored submit wrote (the jobs table holds it as JSON, unchecked when read). */
const storedRequest = (job: JobRecord) => job.request as Stored;
/** A video job's state: null before the operation started, then what the last step returned. */
const storedState = (job: JobRecord) => job.state as VideoState | null;

/** One step of a video job: start the operation, or check it and, once done, keep the file. */
async function videoStep(services: CapabilityDeps, job: JobRecord, signal: AbortSignal): Promise<JobDone | JobRecheck> {
  const stored = storedRequest(job);
  const pollMs = services.config.jobs.poll_seconds * 1000;
  const state = storedState(job);
  if (!state) {
    const targets = mediaTargets(services, job.model, 'video', stored.req.references.length);
    const references = await loadReferences(services, stored.req.references);
    const ex = await exchange(services.pipeline, job.model, targets, (t, call) => t.adapter.start({ req: stored.req, references }, { ...call, signal }), { requestId: job.id, capability: 'video' });
    const next: VideoState = { provider: ex.target.provider.id, keyIndex: services.pipeline.keyIndexOf(ex.target), upstreamModel: ex.target.upstreamModel, operation: ex.value.operation, seconds: ex.value.seconds, warnings: ex.warnings, failures: 0 };
    return { type: 'recheck', inMs: pollMs, state: next };
  }
  // The operation belongs to the account of the key that started it: checked with that key, or not at all.
  const provider = services.pipeline.providerWithKey(state.provider, state.keyIndex ?? 0);
  if (provider === null) throw new GatewayError(502, 'provider_error', 'upstream_error', `The key of provider '${state.provider}' that started this video is no longer configured: its account alone can report on it.`);
  const adapter = provider && adapterFor(provider.type, 'video');
  if (!provider || !adapter) throw new GatewayError(502, 'provider_error', 'upstream_error', `The provider '${state.provider}' running this video is no longer configured for video.`);
  const call: AdapterCall = { provider, upstreamModel: state.upstreamModel, warn: () => {}, waitOn: (p) => p, signal };
  const key = jobOutputKey(job.id);
  let contentType: string;
  try {
    const poll = await adapter.poll(state.operation, call);
    if (poll.state === 'running') return { type: 'recheck', inMs: pollMs, state: { ...state, failures: 0 } };
    const file = await poll.fetch();
    contentType = mediaType(file.contentType, 'video', 'video/mp4');
    await services.jobs.blobs.put(key, Buffer.isBuffer(file.body) ? Readable.from([file.body]) : file.body, contentType);
  } catch (err) {
    if (err instanceof GatewayError || signal.aborted) throw err;
    const e = upstreamFailure(err, provider.id);
    if (!e) throw err;
    // A check that failed on the way (network, 5xx, 429) is tried again at the next one.
    if (e.retryable && state.failures + 1 < MAX_POLL_FAILURES) return { type: 'recheck', inMs: pollMs, state: { ...state, failures: state.failures + 1 } };
    throw new GatewayError(502, 'provider_error', 'upstream_error', `Checking the video failed: ${e.message}`);
  }
  const read = await containerDuration(services, key);
  const seconds = read ?? state.seconds;
  const warnings = [...stored.warnings, ...state.warnings];
  if (read === null) warnings.push(`the video's duration could not be read from the file: billed as the ${state.seconds} s requested`);
  return {
    type: 'done',
    result: { created: Math.floor(services.clock.now() / 1000), data: [{ url: hostedUrl(services, key), content_type: contentType, duration_seconds: seconds }] },
    outputKey: key,
    billing: { provider: provider.id, upstreamModel: state.upstreamModel, usage: null, metered: { unit: 'video_second', quantity: seconds }, estimated: read === null },
    warnings,
  };
}

/** The image and video job kinds, run with `services`. */
export const mediaJobKinds = (services: CapabilityDeps): JobKind[] => [
  { kind: IMAGE_JOB, capability: 'images', run: ({ job, signal }) => makeImage(services, job.id, job.model, storedRequest(job), signal) },
  { kind: VIDEO_JOB, capability: 'video', run: ({ job, signal }) => videoStep(services, job, signal) },
];

export type ImageCall = Caller & Pick<CallInfo, 'origin'>;

type Answer =
  | { status: 200; body: ImagesBody; headers: Record<string, string>; upstreamMs: number }
  | { status: 202; body: JobObject; headers: Record<string, string>; upstreamMs: number }
  | { status: 524; body: z.infer<typeof GenerationTimeoutBody>; headers: Record<string, string>; upstreamMs: number };

/** Tokens reserved before the upstream is asked: one image, or the longest video (10 s), by the model's rule. */
function reservation(model: { endpoint: 'images' | 'video' } & Parameters<typeof unitTokens>[0]): number {
  return model.endpoint === 'video' ? unitTokens(model, 'video_second', 10) : unitTokens(model, 'image', 1);
}

export async function generateMedia(services: CapabilityDeps, c: ImageCall, body: Body): Promise<Answer> {
  const model = services.pipeline.model(body.model);
  const capability: Media = model.endpoint === 'video' ? 'video' : 'images';
  const warnings: string[] = [];
  const req = parseMediaRequest(body, capability === 'video', warnings);
  mediaTargets(services, model.id, capability, req.references.length); // a model of another kind, or one that cannot edit: 400 before anything is reserved
  const stored: Stored = { req, warnings };
  const reserveTokens = reservation({ ...model, endpoint: capability });
  const noteWarnings: Record<string, string> = warnings.length ? { 'x-gateway-warnings': gatewayHeaders('', warnings)['x-gateway-warnings']! } : {};

  if (capability === 'video' || !req.sync) {
    const job = await services.jobs.submit({ principal: c.principal, kind: capability === 'video' ? VIDEO_JOB : IMAGE_JOB, model: model.id, request: stored, sent: body, reserveTokens });
    return { status: 202, body: withOrigin(job, c.origin()), headers: noteWarnings, upstreamMs: 0 };
  }

  const origin = jobOrigin({ principal: c.principal, kind: IMAGE_JOB, model: model.id, request: stored, sent: body });
  const started = services.clock.now();
  const meter = await services.pipeline.admit({ requestId: origin.id, principal: c.principal, model: model.id, endpoint: 'images', reserveTokens, ttlMs: services.jobs.maxRunMs });
  const abort = new AbortController();
  const work = makeImage(services, origin.id, model.id, stored, abort.signal, c.log, c.requestId);
  const outcome = await syncOrJob(
    services,
    { origin, meter, abort, what: 'image', pollPath: `/v1/images/generations/${origin.id}`, show: (job) => withOrigin(job, c.origin()) },
    work,
    (done) => done,
  );
  if ('timeout' in outcome) return { status: 524, body: outcome.timeout, headers: meter.headers, upstreamMs: 0 };
  const done = outcome.done;
  await meter.settle(done.billing);
  await services.jobs.recordDone(origin, done, started).catch((err) => c.log?.warn({ err, job: origin.id }, 'keeping the finished image as a job failed; its hosted copy stays until the blob store is cleaned'));
  return {
    status: 200,
    body: withOrigin(done.result as ImagesBody, c.origin()),
    headers: { ...meter.headers, ...gatewayHeaders(done.upstream, done.warnings ?? []) },
    upstreamMs: done.upstreamMs,
  };
}

export async function imageJob(services: CapabilityDeps, principal: Principal, id: string, origin: string): Promise<JobObject> {
  return withOrigin(await services.jobs.status(principal, id, MEDIA_JOBS), origin);
}
