import { z } from 'zod';
import { httpsOrDataUrl, modelId } from './common.ts';

export const ImageResponseFormat = z
  .enum(['url', 'b64_json', 'base64', 'base64_json'])
  .describe('`url` (default) or `b64_json`; `base64` and `base64_json` are aliases of `b64_json`.');

export const ImageGenerationRequest = z
  .looseObject({
    model: modelId.describe('Image or video model id.'),
    prompt: z.string().min(1),
    size: z
      .string()
      .regex(/^(\d{2,5}x\d{2,5}|\d{1,3}:\d{1,3}|auto)$/, { message: 'must be WIDTHxHEIGHT (e.g. 1024x1024) or an aspect ratio W:H' })
      .optional(),
    aspect_ratio: z.string().regex(/^\d{1,3}:\d{1,3}$/, { message: 'must be an aspect ratio W:H' }).optional(),
    image_url: z
      .union([httpsOrDataUrl, z.array(httpsOrDataUrl).min(1).max(5)])
      .optional()
      .describe('Reference image(s) for editing, up to 5: HTTPS URLs or data: URIs.'),
    negative_prompt: z.string().optional(),
    seed: z.number().int().optional(),
    quality: z.string().optional().describe('`low` or `medium`; other values are stripped.'),
    style: z.enum(['vivid', 'natural']).optional().describe('Only one model supports it; stripped for the others.'),
    seconds: z.number().optional().describe('Video only; clamped to 0 through 10.'),
    sync: z.boolean().optional().describe('Default true for image models; false returns a job. Video models always run async.'),
    response_format: ImageResponseFormat.optional(),
    n: z.literal(1).optional().describe('Unsupported beyond 1: one image per call.'),
  })
  .meta({ id: 'ImageGenerationRequest' });

export const ImageData = z.looseObject({
  url: z.string().optional().describe('Hosted copy (also present next to b64_json when the gateway keeps one).'),
  b64_json: z.string().optional(),
  revised_prompt: z.string().optional(),
});

export const ImagesResponse = z
  .looseObject({
    created: z.number().int(),
    data: z.array(ImageData),
    usage: z.looseObject({}).optional(),
  })
  .meta({ id: 'ImagesResponse' });
