// OpenAI images: `/images/generations` (JSON) and, with reference images, `/images/edits`
// (multipart, `image[]` for several). The GPT image models always answer base64 and reject
// `response_format`; DALL·E is asked for base64 too, so the gateway hosts every copy itself and
// never hands out the provider's 60-minute URL.
import { whole } from '../../translate/usage.ts';
import { mapToSize, stripUnsupported, type Field } from '../media-mapping.ts';
import { extensionOf } from '../../media/references.ts';
import type { AdapterCall } from '../adapter.ts';
import { postJson, postMultipart } from '../../upstream/http.ts';
import { contentPolicy, type ImageAdapter, type ImageOutput, type MediaInput } from '../media.ts';
import type { MultipartField } from '../../upstream/multipart.ts';
import { UpstreamError, upstreamErrorCode } from '../../upstream/errors.ts';
import { vendorTarget } from '../vendor-client.ts';
import { asWire } from '../../upstream/json.ts';
import type * as W from './wire.ts';
import { openaiClient } from './client.ts';

type Family = { sizes: readonly string[] | 'any16'; fields: readonly Field[]; references: number; base64Param: boolean };

/** gpt-image-2: any WxH with both sides multiples of 16, ratio 1:3..3:1, at most 3840×2160. */
const GPT_IMAGE_2: Family = { sizes: 'any16', fields: ['quality'], references: 5, base64Param: false };
const GPT_IMAGE: Family = { sizes: ['1024x1024', '1536x1024', '1024x1536'], fields: ['quality'], references: 5, base64Param: false };
const DALL_E_3: Family = { sizes: ['1024x1024', '1792x1024', '1024x1792'], fields: ['style'], references: 0, base64Param: true };
const DALL_E_2: Family = { sizes: ['256x256', '512x512', '1024x1024'], fields: [], references: 1, base64Param: true };

export function openAiImageFamily(model: string): Family {
  if (/^dall-e-3/.test(model)) return DALL_E_3;
  if (/^dall-e-2/.test(model)) return DALL_E_2;
  if (/^gpt-image-2/.test(model)) return GPT_IMAGE_2;
  return GPT_IMAGE; // gpt-image-1*, chatgpt-image-*, and OpenAI-shaped image servers
}

const round16 = (n: number) => Math.max(16, Math.round(n / 16) * 16);

/** gpt-image-2's free size: multiples of 16, ratio within 1:3..3:1, long side ≤ 3840, short side ≤ 2160. */
function freeSize(input: MediaInput, call: AdapterCall): string | null {
  const asked = input.req.pixels ?? (input.req.ratio ? { w: input.req.ratio.w * 1024, h: input.req.ratio.h * 1024 } : null);
  if (!asked) return null;
  let { w, h } = asked;
  if (!input.req.pixels) {
    const scale = Math.sqrt((1024 * 1024) / (w * h));
    [w, h] = [w * scale, h * scale];
  }
  const r = Math.min(3, Math.max(1 / 3, w / h));
  if (w >= h) h = w / r;
  else w = h * r;
  const fit = Math.min(1, 3840 / Math.max(w, h), 2160 / Math.min(w, h));
  const size = `${round16(w * fit)}x${round16(h * fit)}`;
  const sent = input.req.pixels ? `${input.req.pixels.w}x${input.req.pixels.h}` : null;
  if (size !== sent) call.warn(`${sent ? `size ${sent}` : `aspect ratio ${input.req.ratio!.w}:${input.req.ratio!.h}`} sent as size ${size}`);
  return size;
}

function policyRefusal(err: unknown, provider: string): never {
  if (err instanceof UpstreamError && err.status === 400) {
    const code = upstreamErrorCode(err);
    if (code === 'moderation_blocked' || code === 'content_policy_violation') throw contentPolicy(provider, err.message.replace(/^provider '[^']*': answered HTTP 400: /, ''));
  }
  throw err;
}

export const openAiImages: ImageAdapter = {
  maxReferences: (model) => openAiImageFamily(model).references,
  async run(input, call): Promise<ImageOutput> {
    const family = openAiImageFamily(call.upstreamModel);
    const { req, references } = input;
    const size = family.sizes === 'any16' ? freeSize(input, call) : mapToSize(req, family.sizes, call);
    stripUnsupported(req, family.fields, call);
    const fields: Record<string, string> = { model: call.upstreamModel, prompt: req.prompt };
    if (size) fields.size = size;
    if (req.quality && family.fields.includes('quality')) fields.quality = req.quality;
    if (req.style && family.fields.includes('style')) fields.style = req.style;
    if (family.base64Param) fields.response_format = 'b64_json';
    let answer;
    try {
      if (references.length) {
        const files: MultipartField[] = references.map((r, i) => ({
          name: references.length > 1 ? 'image[]' : 'image',
          filename: `image-${i + 1}.${extensionOf(r.mediaType)}`,
          contentType: r.mediaType,
          data: r.data,
        }));
        const form: MultipartField[] = [...Object.entries(fields).map(([name, value]) => ({ name, value })), ...files];
        answer = await call.waitOn(postMultipart({ ...vendorTarget(openaiClient, call.provider, '/images/edits'), signal: call.signal }, form));
      } else {
        answer = await call.waitOn(postJson({ ...vendorTarget(openaiClient, call.provider, '/images/generations'), body: fields, signal: call.signal }));
      }
    } catch (err) {
      policyRefusal(err, call.provider.id);
    }
    const json = asWire<W.Images>(answer.json);
    const first = json.data?.find((d) => typeof d.b64_json === 'string' && d.b64_json.length > 0);
    if (!first) throw new UpstreamError(`provider '${call.provider.id}': answered without an image`, 502, true, 'upstream_error');
    const format = json.output_format ?? 'png';
    const usage = json.usage && typeof json.usage.input_tokens === 'number' && typeof json.usage.output_tokens === 'number'
      ? {
          inputTokens: json.usage.input_tokens,
          outputTokens: json.usage.output_tokens,
          cachedTokens: 0,
          cacheWriteTokens: 0,
          reasoningTokens: 0,
          // Output tokens are image tokens unless `output_tokens_details` splits them (newer GPT image
          // models also write text); input images are priced apart from the prompt's text.
          imageOutputTokens: json.usage.output_tokens_details ? whole(json.usage.output_tokens_details.image_tokens) : json.usage.output_tokens,
          imageInputTokens: whole(json.usage.input_tokens_details?.image_tokens),
        }
      : null;
    return {
      image: { data: Buffer.from(first.b64_json!, 'base64'), contentType: `image/${format === 'jpg' ? 'jpeg' : format}`, ...(first.revised_prompt ? { revisedPrompt: first.revised_prompt } : {}) },
      usage,
      ...(json.usage ? { usageBody: json.usage } : {}),
    };
  },
};
