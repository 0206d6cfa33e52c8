// OpenRouter's video API: `POST /videos` starts a generation, `GET /videos/{id}` polls it
// (pending → in_progress → completed | failed | cancelled | expired), and the file comes from
// `GET /videos/{id}/content?index=0` with the same bearer key.
import { mapToRatio, stripUnsupported } from '../media-mapping.ts';
import { dataUri } from '../../media/references.ts';
import { GatewayError } from '../../runtime/errors.ts';
import { download, getJson, postJson } from '../../upstream/http.ts';
import { MODERATION, contentPolicy, moderationRefusal, type VideoAdapter } from '../media.ts';
import { openaiClient } from '../openai/client.ts';
import { redactUpstreamText } from '../../upstream/errors.ts';
import { vendorTarget } from '../vendor-client.ts';
import { asWire } from '../../upstream/json.ts';
import type * as W from './wire.ts';

const RATIOS = ['16:9', '9:16', '1:1', '4:3', '3:4', '21:9'];
const DEFAULT_SECONDS = 5;

export const openRouterVideo: VideoAdapter = {
  maxReferences: () => 1,
  async start({ req, references }, call) {
    // Whole seconds, at least one: the durations each model accepts are not published in one place.
    const seconds = req.seconds === null ? DEFAULT_SECONDS : Math.max(1, Math.round(req.seconds));
    if (req.seconds !== null && seconds !== req.seconds) call.warn(`seconds ${req.seconds} changed to ${seconds}`);
    const body: W.VideoRequest = { model: call.upstreamModel, prompt: req.prompt, duration: seconds };
    const aspect = mapToRatio(req, RATIOS, call);
    if (aspect) body.aspect_ratio = aspect;
    if (req.pixels) body.resolution = Math.min(req.pixels.w, req.pixels.h) > 720 ? '1080p' : '720p';
    if (req.seed !== null) body.seed = req.seed;
    stripUnsupported(req, ['seed'], call);
    if (references.length) body.frame_images = [{ type: 'image_url', image_url: { url: dataUri(references[0]!) }, frame_type: 'first_frame' }];
    let json: W.Video;
    try {
      json = asWire<W.Video>((await call.waitOn(postJson({ ...vendorTarget(openaiClient, call.provider, '/videos'), body, signal: call.signal }))).json);
    } catch (err) {
      throw moderationRefusal(err, call.provider.id);
    }
    if (typeof json.id !== 'string' || !json.id) throw new GatewayError(502, 'provider_error', 'upstream_error', `provider '${call.provider.id}': started no video (no id in the answer)`);
    return { operation: json.id, seconds };
  },
  async poll(operation, call) {
    const path = `/videos/${encodeURIComponent(operation)}`;
    const json = asWire<W.Video>((await call.waitOn(getJson({ ...vendorTarget(openaiClient, call.provider, path), signal: call.signal }))).json);
    const provider = call.provider.id;
    switch (json.status) {
      case 'completed':
        return { state: 'done', fetch: () => download({ ...vendorTarget(openaiClient, call.provider, `${path}/content?index=0`), signal: call.signal }) };
      case 'failed':
      case 'cancelled':
      case 'expired': {
        const message = typeof json.error === 'string' ? json.error : (json.error?.message ?? json.status);
        if (MODERATION.test(String(message))) throw contentPolicy(provider, String(message));
        throw new GatewayError(502, 'provider_error', 'upstream_error', `provider '${provider}': the video ${json.status}: ${redactUpstreamText(String(message))}`);
      }
      default:
        return { state: 'running' };
    }
  },
};
