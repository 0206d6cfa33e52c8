// The client's image/video request (docs/api.md, "Images and video"), checked and normalized once, whatever the upstream:
// aliases resolved, `seconds` clamped, sizes parsed, impossible values refused with their `param`.
// What each upstream then honours, maps or strips is its adapter's business (docs/images.md).
import type { z } from 'zod';
import type { ImageGenerationRequest } from '../../contract/images.ts';
import { errors } from '../runtime/errors.ts';
import { parsePixels, parseRatio, ratio, type Dimensions } from './geometry.ts';

export type MediaRequest = {
  prompt: string;
  /** A pixel size the client asked for (`size: WxH`). */
  pixels: Dimensions | null;
  /** An aspect ratio the client asked for (`size: W:H` or `aspect_ratio`), when no pixel size says it. */
  ratio: Dimensions | null;
  /** Reference images as sent (HTTPS URLs or data: URIs), loaded when the request runs. */
  references: string[];
  negativePrompt: string | null;
  seed: number | null;
  quality: 'low' | 'medium' | null;
  style: 'vivid' | 'natural' | null;
  /** Video: seconds, clamped to 0..10 (each upstream then takes its nearest duration). */
  seconds: number | null;
  responseFormat: 'url' | 'b64_json';
  sync: boolean;
};

/** Widest aspect ratio any upstream accepts (Gemini's 8:1); beyond it a ratio is impossible, not mapped. */
const MAX_RATIO = 8;
/** Longest side of any upstream's output (gpt-image-2: 3840; Gemini 4K: 4096 on the long side). */
const MAX_SIDE = 8192;

type Body = z.infer<typeof ImageGenerationRequest>;

function checkDimensions(d: Dimensions, param: string, raw: string): void {
  if (!d.w || !d.h) throw errors.invalid(`${param} '${raw}' has a zero side.`, param, 'invalid_size');
  if (Math.max(d.w / d.h, d.h / d.w) > MAX_RATIO) {
    throw errors.invalid(`${param} '${raw}' is more elongated than any model can make (at most ${MAX_RATIO}:1 or 1:${MAX_RATIO}).`, param, 'invalid_size');
  }
}

export function parseMediaRequest(body: Body, video: boolean, warnings: string[]): MediaRequest {
  let pixels: Dimensions | null = null;
  let r: Dimensions | null = null;
  if (body.size && body.size !== 'auto') {
    if (body.size.includes('x')) {
      pixels = parsePixels(body.size);
      checkDimensions(pixels, 'size', body.size);
      if (Math.max(pixels.w, pixels.h) > MAX_SIDE) throw errors.invalid(`size '${body.size}' is larger than any model makes (${MAX_SIDE} pixels a side at most).`, 'size', 'invalid_size');
    } else {
      r = parseRatio(body.size);
      checkDimensions(r, 'size', body.size);
    }
  }
  if (body.aspect_ratio) {
    const a = parseRatio(body.aspect_ratio);
    checkDimensions(a, 'aspect_ratio', body.aspect_ratio);
    const given = pixels ?? r;
    if (given && Math.abs(Math.log(a.w / a.h) - Math.log(given.w / given.h)) > 0.01) {
      throw errors.invalid(`aspect_ratio '${body.aspect_ratio}' contradicts size '${body.size}' (${ratio(given)}); send one of them.`, 'aspect_ratio', 'invalid_size');
    }
    if (!given) r = a;
  }
  let quality: MediaRequest['quality'] = null;
  if (body.quality !== undefined) {
    if (body.quality === 'low' || body.quality === 'medium') quality = body.quality;
    else warnings.push(`quality '${body.quality}' is not supported (only low or medium): stripped`);
  }
  let seconds: number | null = null;
  if (body.seconds !== undefined) {
    if (!video) warnings.push('seconds applies to video models only: ignored');
    else {
      seconds = Math.min(10, Math.max(0, body.seconds));
      if (seconds !== body.seconds) warnings.push(`seconds ${body.seconds} clamped to ${seconds}`);
    }
  }
  if (video && body.sync === true) warnings.push('sync: video models always run as a job');
  const references = body.image_url === undefined ? [] : typeof body.image_url === 'string' ? [body.image_url] : body.image_url;
  return {
    prompt: body.prompt,
    pixels,
    ratio: r,
    references,
    negativePrompt: body.negative_prompt ?? null,
    seed: body.seed ?? null,
    quality,
    style: body.style ?? null,
    seconds,
    responseFormat: responseFormat(body),
    sync: !video && body.sync !== false,
  };
}

/**
 * `url` by default (docs/api.md, "Images and video"); the base64 aliases mean `b64_json`, which carries the url too. A
 * client that names a GPT image model and no format gets both: OpenAI answers those models only in
 * base64, so clients written for them (the Vercel AI SDK, OpenAI's own examples) read `b64_json`.
 */
function responseFormat(body: Body): MediaRequest['responseFormat'] {
  if (body.response_format === undefined) return /^(gpt-image-|chatgpt-image-)/.test(body.model) ? 'b64_json' : 'url';
  return body.response_format === 'url' ? 'url' : 'b64_json';
}
