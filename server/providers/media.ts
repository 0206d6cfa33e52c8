// The images and video capabilities' adapter types: the gateway's normalized request in
// (media/request.ts, reference images already loaded), image bytes or a long-running operation out.
// Each adapter maps sizes, durations and fields to its upstream's vocabulary and names what it
// changed or stripped through `call.warn` (docs/images.md lists them per upstream model).
import { GatewayError } from '../runtime/errors.ts';
import { UpstreamError, redactUpstreamText } from '../upstream/errors.ts';
import type * as C from '../translate/canonical.ts';
import type { MediaRequest } from '../media/request.ts';
import type { ReferenceImage } from '../media/references.ts';
import type { AdapterCall } from './adapter.ts';
import type { UpstreamDownload } from '../upstream/http.ts';

export type MediaInput = { req: MediaRequest; references: ReferenceImage[] };

export type GeneratedImage = { data: Buffer; contentType: string; revisedPrompt?: string };

/** One generated image and the token usage the upstream reported (null: none; the per-image rule bills it). */
export type ImageOutput = { image: GeneratedImage; usage: C.Usage | null; usageBody?: Record<string, unknown> };

export interface ImageAdapter {
  /** How many reference images the upstream model takes: 0 when it cannot edit. */
  maxReferences(upstreamModel: string): number;
  run(input: MediaInput, call: AdapterCall): Promise<ImageOutput>;
}

/** A video being made upstream: the operation to poll and the duration asked for. */
export type VideoStarted = { operation: string; seconds: number };

export type VideoPoll =
  | { state: 'running' }
  /** Done: the file, fetched with the provider's credential where it needs one. */
  | { state: 'done'; fetch(): Promise<UpstreamDownload | { body: Buffer; contentType: string }> };

export interface VideoAdapter {
  maxReferences(upstreamModel: string): number;
  /** Starts the operation (failover applies here); throws GatewayError for refusals. */
  start(input: MediaInput, call: AdapterCall): Promise<VideoStarted>;
  /** One check of the operation; a failed or filtered end throws GatewayError. */
  poll(operation: string, call: AdapterCall): Promise<VideoPoll>;
}

/** Words with which OpenRouter and the servers behind it say a refusal was a moderation decision (no code says it). */
export const MODERATION = /moderat|flagged|content.polic|safety (system|filter)/i;

/**
 * An upstream failure that says it was a moderation decision, as a content-policy refusal;
 * anything else unchanged. For upstreams whose refusals carry no machine-readable code.
 */
export function moderationRefusal(err: unknown, provider: string): unknown {
  // A refusal is a 4xx (OpenRouter says 403 for flagged input); a 5xx naming moderation is still an outage.
  const refusal = err instanceof UpstreamError && err.status >= 400 && err.status < 500 && err.status !== 429 && MODERATION.test(err.message);
  return refusal ? contentPolicy(provider, err.message.replace(/^provider '[^']*': /, '')) : err;
}

/**
 * The upstream refused the prompt or its result under its content policy (docs/api.md, "Images and video"): the client's
 * to change, never retried, nothing billed. `reason` is (or quotes) the upstream's words: redacted.
 */
export const contentPolicy = (provider: string, reason: string) =>
  new GatewayError(400, 'invalid_request_error', 'content_policy_violation', `The upstream provider '${provider}' refused the request under its content policy: ${redactUpstreamText(reason)}`, 'prompt');
