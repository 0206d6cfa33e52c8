// Image output from OpenRouter and other OpenAI-compatible servers that follow it: chat
// completions with `modalities`, the size as `image_config.aspect_ratio` (and `image_size` for
// Gemini models), the images back as data URIs in `message.images`.
import { geminiImageSize } from '../gemini/images.ts';
import { mapToRatio, stripUnsupported } from '../media-mapping.ts';
import { dataUri } from '../../media/references.ts';
import { postJson } from '../../upstream/http.ts';
import { moderationRefusal, type ImageAdapter } from '../media.ts';
import { decodeUsage } from '../openai/chat.ts';
import { openaiClient } from '../openai/client.ts';
import { UpstreamError } from '../../upstream/errors.ts';
import { vendorTarget } from '../vendor-client.ts';
import { asWire } from '../../upstream/json.ts';
import type * as W from './wire.ts';

const RATIOS = ['1:1', '2:3', '3:2', '3:4', '4:3', '4:5', '5:4', '9:16', '16:9', '21:9'];
const DATA = /^data:([^;,]+)(?:;[^,]*)?;base64,(.*)$/s;

/** Image-only models (Flux, Sourceful, ...) answer with images alone; Gemini-style ones with text too. */
const imageOnly = (model: string) => /flux|sourceful|riverflow|seedream|recraft/i.test(model);

export const openRouterImages: ImageAdapter = {
  maxReferences: () => 5,
  async run({ req, references }, call) {
    const model = call.upstreamModel;
    const imageConfig: NonNullable<W.ImageChatRequest['image_config']> = {};
    const aspect = mapToRatio(req, RATIOS, call);
    if (aspect) imageConfig.aspect_ratio = aspect;
    if (req.pixels) {
      const side = Math.max(req.pixels.w, req.pixels.h);
      if (/gemini/i.test(model)) imageConfig.image_size = geminiImageSize(side);
      else call.warn(`size: only the aspect ratio is sent to this model (${side} pixels on the long side is not)`);
    }
    stripUnsupported(req, ['seed'], call);
    const content: W.ImageChatRequest['messages'][number]['content'] = references.length
      ? [{ type: 'text', text: req.prompt }, ...references.map((r) => ({ type: 'image_url' as const, image_url: { url: dataUri(r) } }))]
      : req.prompt;
    const body: W.ImageChatRequest = {
      model,
      messages: [{ role: 'user', content }],
      modalities: imageOnly(model) ? ['image'] : ['image', 'text'],
      ...(Object.keys(imageConfig).length ? { image_config: imageConfig } : {}),
      ...(req.seed !== null ? { seed: req.seed } : {}),
    };
    let json: W.ImageChatCompletion;
    try {
      json = asWire<W.ImageChatCompletion>((await call.waitOn(postJson({ ...vendorTarget(openaiClient, call.provider, '/chat/completions'), body, signal: call.signal }))).json);
    } catch (err) {
      throw moderationRefusal(err, call.provider.id);
    }
    const message = json.choices?.[0]?.message;
    const url = message?.images?.map((i) => i?.image_url?.url).find((u): u is string => typeof u === 'string');
    const m = url ? DATA.exec(url) : null;
    if (!m) {
      const why = json.choices?.[0]?.finish_reason ?? 'none';
      throw new UpstreamError(`provider '${call.provider.id}': answered without an image (finish_reason ${why})`, 502, true, 'upstream_error');
    }
    const u = json.usage;
    // A chat completion's usage, read as chat answers are: the image's tokens (completion_tokens_details.image_tokens)
    // are priced as image output and cached prompt tokens as cache reads, not all as text.
    const usage = typeof u?.prompt_tokens === 'number' && typeof u?.completion_tokens === 'number' ? decodeUsage(u) : null;
    return { image: { data: Buffer.from(m[2]!, 'base64'), contentType: m[1]! }, usage, ...(u ? { usageBody: u } : {}) };
  },
};
