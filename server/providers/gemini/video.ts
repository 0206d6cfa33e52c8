// Veo through the Gemini API: `:predictLongRunning` starts an operation, `GET /{name}` polls it
// (treated as opaque), and the finished file is downloaded with the provider key, which is sent
// only to the API's own origin. Three ends: a video, an error (google.rpc.Status, gRPC codes),
// and the content filter's "success" without samples.
import { nearestOf } from '../../media/geometry.ts';
import { mapToRatio, stripUnsupported } from '../media-mapping.ts';
import { GatewayError } from '../../runtime/errors.ts';
import { download, getJson, postJson } from '../../upstream/http.ts';
import { contentPolicy, type VideoAdapter } from '../media.ts';
import { redactUpstreamText } from '../../upstream/errors.ts';
import { joinUrl, vendorTarget } from '../vendor-client.ts';
import { asWire } from '../../upstream/json.ts';
import type * as W from './wire.ts';
import { geminiClient, modelPath } from './client.ts';

const isVeo2 = (model: string) => /veo-2/.test(model);
/** Durations Veo accepts: Veo 3.x 4, 6 or 8 s; Veo 2 5 to 8 s. */
const durations = (model: string) => (isVeo2(model) ? [5, 6, 7, 8] : [4, 6, 8]);
const DEFAULT_SECONDS = 8;

/** gRPC status codes (google.rpc.Code) that mean the request itself was wrong. */
const CLIENT_CODES = new Set([3, 5, 7, 9, 11]);

export const geminiVideo: VideoAdapter = {
  // Veo 3.1 takes up to 3 asset references; the others one image (the first frame).
  maxReferences: (model) => (/veo-3\.1/.test(model) ? 3 : 1),
  async start({ req, references }, call) {
    const model = call.upstreamModel;
    const seconds = req.seconds === null ? DEFAULT_SECONDS : nearestOf(req.seconds, durations(model));
    if (req.seconds !== null && seconds !== req.seconds) call.warn(`seconds ${req.seconds} changed to ${seconds}, the nearest duration this model makes`);
    const parameters: W.VeoParameters = { durationSeconds: seconds, sampleCount: 1 };
    const aspectRatio = mapToRatio(req, ['16:9', '9:16'], call);
    if (aspectRatio) parameters.aspectRatio = aspectRatio;
    if (req.pixels) {
      const short = Math.min(req.pixels.w, req.pixels.h);
      const allowed = /veo-3\.1/.test(model) ? [720, 1080, 2160] : [720, 1080];
      const res = nearestOf(short, allowed);
      parameters.resolution = res === 2160 ? '4k' : `${res}p`;
      if (res !== short) call.warn(`size ${req.pixels.w}x${req.pixels.h} sent as resolution ${parameters.resolution}`);
    }
    if (req.negativePrompt !== null) parameters.negativePrompt = req.negativePrompt;
    stripUnsupported(req, ['negative_prompt'], call);
    const image = (r: (typeof references)[number]): W.VeoImage => ({ bytesBase64Encoded: r.data.toString('base64'), mimeType: r.mediaType });
    const instance: W.VeoInstance = { prompt: req.prompt };
    if (references.length === 1) instance.image = image(references[0]!);
    else if (references.length > 1) instance.referenceImages = references.map((r) => ({ image: image(r), referenceType: 'asset' }));
    const answer = await call.waitOn(
      postJson({ ...vendorTarget(geminiClient, call.provider, modelPath(model, 'predictLongRunning')), body: { instances: [instance], parameters }, signal: call.signal }),
    );
    const json = asWire<W.Operation>(answer.json);
    if (typeof json.name !== 'string' || !json.name) throw new GatewayError(502, 'provider_error', 'upstream_error', `provider '${call.provider.id}': started no operation (no name in the answer)`);
    return { operation: json.name, seconds };
  },
  async poll(operation, call) {
    const base = vendorTarget(geminiClient, call.provider, '/' + operation.replace(/^\/+/, ''));
    const json = asWire<W.Operation>((await call.waitOn(getJson({ ...base, signal: call.signal }))).json);
    if (json.done !== true) return { state: 'running' };
    const provider = call.provider.id;
    if (json.error) {
      const code = Number(json.error.code);
      const message = `provider '${provider}': the video failed: ${redactUpstreamText(String(json.error.message ?? 'no message'))} (code ${redactUpstreamText(String(json.error.code))})`;
      throw CLIENT_CODES.has(code) ? new GatewayError(400, 'invalid_request_error', 'upstream_invalid_request', message) : new GatewayError(502, 'provider_error', 'upstream_error', message);
    }
    const r: W.VeoVideos = json.response?.generateVideoResponse ?? json.response ?? {};
    const sample = (r.generatedSamples ?? r.videos ?? [])[0];
    const video = sample?.video ?? sample;
    if (!video || (!video.uri && !video.encodedVideo && !video.bytesBase64Encoded)) {
      const reasons: string[] = r.raiMediaFilteredReasons ?? [];
      if (r.raiMediaFilteredCount || reasons.length) throw contentPolicy(provider, `the video was filtered${reasons.length ? `: ${reasons.join('; ')}` : ''}`);
      throw new GatewayError(502, 'provider_error', 'upstream_error', `provider '${provider}': the operation ended without a video`);
    }
    return {
      state: 'done',
      fetch: async () => {
        const inline = video.encodedVideo ?? video.bytesBase64Encoded;
        if (inline) return { body: Buffer.from(inline, 'base64'), contentType: video.encoding ?? video.mimeType ?? 'video/mp4' };
        // No inline bytes here, so the check above saw a uri.
        const url = new URL(video.uri ?? '', joinUrl(base.url, ''));
        // The key goes only to the API's own origin; a file elsewhere is fetched without it.
        const sameOrigin = url.origin === new URL(base.url).origin;
        return download({ ...base, url: url.href, headers: sameOrigin ? base.headers : {}, signal: call.signal });
      },
    };
  },
};
