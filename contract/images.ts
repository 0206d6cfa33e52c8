import { z } from 'zod';
import { httpsOrDataUrl, modelId } from './common.ts';

const ImageResponseFormat = z
  .enum(['url', 'b64_json', 'base64', 'base64_json'])
  .describe(
    '`url` (default) or `b64_json` (which carries the hosted `url` too); `base64` and `base64_json` are aliases of `b64_json`. ' +
      'Not sent, on a `gpt-image-*`/`chatgpt-image-*` model id: both, as OpenAI answers those models in base64 only.',
  );

const ratio = /^\d{1,5}:\d{1,5}$/;

export const ImageGenerationRequest = z
  .looseObject({
    model: modelId.describe('Image or video model id.'),
    prompt: z.string().min(1),
    size: z
      .string()
      .regex(/^(\d{1,5}x\d{1,5}|\d{1,5}:\d{1,5}|auto)$/, { message: 'must be WIDTHxHEIGHT (e.g. 1024x1024), an aspect ratio W:H, or auto' })
      .optional()
      .describe("A pixel size WIDTHxHEIGHT or an aspect ratio W:H, mapped to the nearest the model's upstream supports (what changed is named in X-Gateway-Warnings)."),
    aspect_ratio: z.string().regex(ratio, { message: 'must be an aspect ratio W:H' }).optional().describe('Alternative to size, format W:H.'),
    image_url: z
      .union([httpsOrDataUrl, z.array(httpsOrDataUrl).min(1).max(5)])
      .optional()
      .describe('Reference image(s) for editing (or a video’s first frame / references), up to 5: HTTPS URLs or data: URIs.'),
    negative_prompt: z.string().optional().describe('Forwarded where the upstream supports it (Veo), stripped with a warning elsewhere.'),
    seed: z.number().int().optional().describe('Forwarded where the upstream supports it (Gemini image models, OpenRouter), stripped with a warning elsewhere.'),
    quality: z.string().optional().describe('`low` or `medium`, forwarded where supported; other values are stripped (with a warning).'),
    style: z.enum(['vivid', 'natural']).optional().describe('Only dall-e-3 supports it; stripped (with a warning) for the others.'),
    seconds: z.number().optional().describe('Video only; clamped to 0 through 10, then to the nearest duration the upstream accepts.'),
    sync: z.boolean().optional().describe('Default true for image models; false returns a job. Video models always run async.'),
    response_format: ImageResponseFormat.optional(),
    n: z.literal(1).optional().describe('Unsupported beyond 1: one image per call.'),
  })
  .meta({ id: 'ImageGenerationRequest' });

const ImageData = z.looseObject({
  url: z
    .string()
    .optional()
    .describe("The gateway's hosted copy: a signed link that needs no credential and expires with the job retention (never the provider's own URL). Present next to b64_json too."),
  b64_json: z.string().optional().describe('With response_format b64_json (or its aliases).'),
  revised_prompt: z.string().optional().describe('The prompt the upstream rewrote, when it says (dall-e-3).'),
  content_type: z.string().optional().describe('Media type of the file (image/png, video/mp4, ...).'),
  duration_seconds: z.number().optional().describe('Video: the duration of the file, read from its container (else the duration requested upstream).'),
});

export const ImagesResponse = z
  .looseObject({
    created: z.number().int(),
    data: z.array(ImageData),
    usage: z
      .looseObject({})
      .optional()
      .describe('Token usage the upstream reported (GPT image models, Gemini): billed instead of the per-image rule.'),
  })
  .meta({ id: 'ImagesResponse' });
