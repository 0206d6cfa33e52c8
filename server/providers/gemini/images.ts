// Gemini image output ("Nano Banana"): `generateContent` with the IMAGE modality, reference images
// as inline parts. The answer's image parts are the result; `thought: true` parts are interim
// images, and Gemini 3's (multi-megabyte) thought signatures are dropped with them. Refusals come
// in-band on a 200: a safety finish reason or a blocked prompt.
import { mapToRatio, stripUnsupported } from '../media-mapping.ts';
import { nearestOf } from '../../media/geometry.ts';
import { postJson } from '../../upstream/http.ts';
import { contentPolicy, type ImageAdapter } from '../media.ts';
import { UpstreamError } from '../../upstream/errors.ts';
import { vendorTarget } from '../vendor-client.ts';
import { asWire } from '../../upstream/json.ts';
import type * as W from './wire.ts';
import { geminiClient, modelPath } from './client.ts';
import { decodeUsage } from './generate-content.ts';

const RATIOS = ['1:1', '2:3', '3:2', '3:4', '4:3', '4:5', '5:4', '9:16', '16:9', '21:9'];
/** gemini-3.1-flash-image also makes the tall and wide strips. */
const RATIOS_31 = [...RATIOS, '1:4', '4:1', '1:8', '8:1'];
/** Gemini 3 image models take an output size by its long side: 1K, 2K or 4K (OpenRouter passes it on as `image_size`). */
export const geminiImageSize = (longSide: number) => ({ 1024: '1K', 2048: '2K', 4096: '4K' })[nearestOf(longSide, [1024, 2048, 4096]) as 1024 | 2048 | 4096];

const isGemini3 = (model: string) => /gemini-3/.test(model);

/** Finish reasons and block reasons that mean the content policy said no. */
const POLICY = new Set(['SAFETY', 'IMAGE_SAFETY', 'PROHIBITED_CONTENT', 'IMAGE_PROHIBITED_CONTENT', 'RECITATION', 'IMAGE_RECITATION', 'BLOCKLIST', 'SPII', 'OTHER']);

export const geminiImages: ImageAdapter = {
  // 2.5-flash-image works best with up to 3 inputs; the Gemini 3 image models take up to 14 (the request allows 5).
  maxReferences: (model) => (isGemini3(model) ? 5 : 3),
  async run({ req, references }, call) {
    const model = call.upstreamModel;
    const aspectRatio = mapToRatio(req, /gemini-3\.1/.test(model) ? RATIOS_31 : RATIOS, call);
    const imageConfig: NonNullable<W.GenerationConfig['imageConfig']> = {};
    if (aspectRatio) imageConfig.aspectRatio = aspectRatio;
    if (req.pixels) {
      const side = Math.max(req.pixels.w, req.pixels.h);
      if (isGemini3(model)) imageConfig.imageSize = geminiImageSize(side);
      else if (side !== 1024) call.warn(`size: this model makes about 1024 pixels on the long side, not ${side}`);
    }
    stripUnsupported(req, ['seed'], call);
    const body: W.GenerateContentRequest = {
      contents: [{ role: 'user', parts: [{ text: req.prompt }, ...references.map((r) => ({ inlineData: { mimeType: r.mediaType, data: r.data.toString('base64') } }))] }],
      generationConfig: { responseModalities: ['TEXT', 'IMAGE'], ...(Object.keys(imageConfig).length ? { imageConfig } : {}), ...(req.seed !== null ? { seed: req.seed } : {}) },
    };
    const answer = await call.waitOn(postJson({ ...vendorTarget(geminiClient, call.provider, modelPath(model, 'generateContent')), body, signal: call.signal }));
    const json = asWire<W.GenerateContentResponse>(answer.json);
    const provider = call.provider.id;
    const blocked = json.promptFeedback?.blockReason;
    if (blocked) throw contentPolicy(provider, `the prompt was blocked (${blocked}${json.promptFeedback?.blockReasonMessage ? `: ${json.promptFeedback.blockReasonMessage}` : ''})`);
    const cand = json.candidates?.[0];
    const image = (cand?.content?.parts ?? []).find((p) => p.inlineData?.data && !p.thought)?.inlineData;
    if (!image?.data) {
      const reason = cand?.finishReason;
      if (reason && POLICY.has(reason)) throw contentPolicy(provider, `no image was generated (finishReason ${reason}${cand?.finishMessage ? `: ${cand.finishMessage}` : ''})`);
      throw new UpstreamError(`provider '${provider}': answered without an image (finishReason ${reason ?? 'none'})`, 502, true, 'upstream_error');
    }
    return {
      image: { data: Buffer.from(image.data, 'base64'), contentType: image.mimeType ?? 'image/png' },
      usage: decodeUsage(json.usageMetadata),
      ...(json.usageMetadata ? { usageBody: json.usageMetadata } : {}),
    };
  },
};
