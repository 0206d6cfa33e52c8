// server/providers/openai-compatible/video.ts: OpenRouter's video API. The normalized request →
// `POST /videos` (duration, aspect_ratio, resolution, seed, first frame), the job polled with
// `GET /videos/{id}` (pending → in_progress → completed | failed | cancelled | expired), the file
// from `GET /videos/{id}/content?index=0`. No recorded answer of this is
// available: requests and answers are the examples of OpenRouter's OpenAPI document
// (github.com/OpenRouterTeam/typescript-sdk, `.speakeasy/in.openapi.yaml`: `VideoGenerationRequest`,
// `/videos` 202, `/videos/{jobId}` 200, the error envelopes), failed jobs' messages ours.
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { openRouterVideo } from '../../server/providers/openai-compatible/video.ts';
import type { VideoPoll } from '../../server/providers/media.ts';
import { PNG_B64, adapterCall, answer, bytesOf, failure, mediaRequest, pngReference, provider, reset, sent } from './media-upstream.ts';

vi.mock('../../server/upstream/http.ts', async (importOriginal) => ({ ...(await importOriginal<object>()), ...(await import('./media-upstream.ts')).fakeHttp }));

beforeEach(reset);

const API = 'https://openrouter.ai/api/v1';
const AUTH = { authorization: 'Bearer test-key' };
const openrouter = () => provider('openai-compatible', { id: 'openrouter', base_url: API });
/** in.openapi.yaml, `POST /videos` 202 example. */
const ACCEPTED = { generation_id: 'gen-xyz789', id: 'job-abc123', polling_url: '/api/v1/videos/job-abc123', status: 'pending' };
/** in.openapi.yaml, `GET /videos/{jobId}` 200 example. */
const COMPLETED = { generation_id: 'gen-xyz789', id: 'job-abc123', polling_url: '/api/v1/videos/job-abc123', status: 'completed', unsigned_urls: ['https://storage.example.com/video.mp4'], usage: { cost: 0.5 } };
const MP4 = Buffer.from('0000001c6674797069736f6d', 'hex');

const start = (over: Parameters<typeof mediaRequest>[0] = {}, references = [] as (typeof pngReference)[], model = 'google/veo-3.1') => {
  const { call, warnings } = adapterCall(openrouter(), model);
  return { warnings, out: openRouterVideo.start({ req: mediaRequest({ prompt: 'A serene mountain landscape at sunset', ...over }), references }, call) };
};
const poll = (id = 'job-abc123') => openRouterVideo.poll(id, adapterCall(openrouter(), 'google/veo-3.1').call);
const bodyOf = (i = 0) => sent[i]!.json;

describe('start: POST /videos', () => {
  it('maxReferences: one (the first frame)', () => {
    expect(openRouterVideo.maxReferences('google/veo-3.1')).toBe(1);
  });

  it("the spec's request example (16:9, 8 s, 720p) from a 1280x720 request; the job id of its 202 answer comes back", async () => {
    answer({ status: 202, json: ACCEPTED });
    const { out, warnings } = start({ pixels: { w: 1280, h: 720 }, seconds: 8 });
    expect(await out).toStrictEqual({ operation: 'job-abc123', seconds: 8 });
    expect(sent).toStrictEqual([
      // in.openapi.yaml, VideoGenerationRequest example: exactly this body.
      { method: 'POST', url: `${API}/videos`, headers: AUTH, json: { model: 'google/veo-3.1', prompt: 'A serene mountain landscape at sunset', duration: 8, aspect_ratio: '16:9', resolution: '720p' } },
    ]);
    expect(warnings).toStrictEqual(['size 1280x720 sent as aspect ratio 16:9']);
  });

  it('no duration asked: 5 s; none of ratio, resolution, seed or frames sent', async () => {
    answer({ json: ACCEPTED });
    const { out, warnings } = start();
    expect(await out).toStrictEqual({ operation: 'job-abc123', seconds: 5 });
    expect(bodyOf()).toStrictEqual({ model: 'google/veo-3.1', prompt: 'A serene mountain landscape at sunset', duration: 5 });
    expect(warnings).toStrictEqual([]);
  });

  it.each([
    [4.6, 5, ['seconds 4.6 changed to 5']],
    [0, 1, ['seconds 0 changed to 1']],
    [10, 10, []],
  ])('seconds %d → %i (whole seconds, at least one)', async (asked, made, warnings) => {
    answer({ json: ACCEPTED });
    const r = start({ seconds: asked });
    expect(await r.out).toStrictEqual({ operation: 'job-abc123', seconds: made });
    expect(bodyOf()).toStrictEqual({ model: 'google/veo-3.1', prompt: 'A serene mountain landscape at sunset', duration: made });
    expect(r.warnings).toStrictEqual(warnings);
  });

  it('resolution from the short side (above 720 → 1080p); a ratio of the six kept, another the nearest (named)', async () => {
    answer({ json: ACCEPTED }, { json: ACCEPTED }, { json: ACCEPTED });
    const a = start({ pixels: { w: 1080, h: 1920 } });
    await a.out;
    const b = start({ pixels: { w: 1000, h: 1000 } });
    await b.out;
    const c = start({ ratio: { w: 3, h: 2 } });
    await c.out;
    expect([bodyOf(0), bodyOf(1), bodyOf(2)]).toStrictEqual([
      { model: 'google/veo-3.1', prompt: 'A serene mountain landscape at sunset', duration: 5, aspect_ratio: '9:16', resolution: '1080p' },
      { model: 'google/veo-3.1', prompt: 'A serene mountain landscape at sunset', duration: 5, aspect_ratio: '1:1', resolution: '1080p' },
      { model: 'google/veo-3.1', prompt: 'A serene mountain landscape at sunset', duration: 5, aspect_ratio: '4:3' },
    ]);
    expect([a.warnings, b.warnings, c.warnings]).toStrictEqual([
      ['size 1080x1920 sent as aspect ratio 9:16'],
      ['size 1000x1000 sent as aspect ratio 1:1'],
      ['aspect ratio 3:2 changed to 4:3, the nearest this model makes'],
    ]);
  });

  it('seed forwarded; negative_prompt, quality and style stripped and named; a reference is the first frame (FrameImage)', async () => {
    answer({ json: ACCEPTED });
    const { out, warnings } = start({ seed: 1234, negativePrompt: 'people', quality: 'low', style: 'vivid' }, [pngReference]);
    await out;
    expect(bodyOf()).toStrictEqual({
      model: 'google/veo-3.1',
      prompt: 'A serene mountain landscape at sunset',
      duration: 5,
      seed: 1234,
      frame_images: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_B64}` }, frame_type: 'first_frame' }],
    });
    expect(warnings).toStrictEqual(['not supported by this model, stripped: negative_prompt, quality, style']);
  });

  it('an answer without an id is a provider failure', async () => {
    answer({ json: { status: 'pending', polling_url: '/api/v1/videos/' } });
    expect(await failure(start().out)).toStrictEqual({
      error: 'GatewayError',
      status: 502,
      type: 'provider_error',
      code: 'upstream_error',
      param: null,
      message: "provider 'openrouter': started no video (no id in the answer)",
    });
  });

  it("the spec's error examples stay upstream failures (400 not retried; 402, out of credits, and 429 go to the next key or upstream)", async () => {
    answer(
      { status: 400, json: { error: { code: 400, message: 'Invalid request parameters' } } },
      { status: 402, json: { error: { code: 402, message: 'Insufficient credits. Add more using https://openrouter.ai/credits' } } },
      { status: 429, json: { error: { code: 429, message: 'Rate limit exceeded' } } },
    );
    expect([await failure(start().out), await failure(start().out), await failure(start().out)]).toStrictEqual([
      { error: 'UpstreamError', status: 400, code: 'upstream_rejected', retryable: false, message: "provider 'openrouter': answered HTTP 400: Invalid request parameters" },
      { error: 'UpstreamError', status: 402, code: 'upstream_error', retryable: true, message: "provider 'openrouter': answered HTTP 402: Insufficient credits. Add more using [url]" },
      { error: 'UpstreamError', status: 429, code: 'upstream_rate_limited', retryable: true, message: "provider 'openrouter': answered HTTP 429: Rate limit exceeded" },
    ]);
  });

  it('a refusal naming moderation (403; wording ours) is a content-policy refusal', async () => {
    answer({ status: 403, json: { error: { code: 403, message: 'Your prompt was flagged by the content moderation of google/veo-3.1.' } } });
    expect(await failure(start().out)).toStrictEqual({
      error: 'GatewayError',
      status: 400,
      type: 'invalid_request_error',
      code: 'content_policy_violation',
      param: 'prompt',
      message: "The upstream provider 'openrouter' refused the request under its content policy: answered HTTP 403: Your prompt was flagged by the content moderation of google/veo-3.1.",
    });
  });
});

describe('poll: GET /videos/{id}', () => {
  it('pending and in_progress (the spec\'s statuses), or a status it does not know, are running', async () => {
    answer({ json: ACCEPTED }, { json: { ...ACCEPTED, status: 'in_progress' } }, { json: { id: 'job-abc123', status: 'queued' } });
    expect([await poll(), await poll(), await poll()]).toStrictEqual([{ state: 'running' }, { state: 'running' }, { state: 'running' }]);
    expect(sent).toStrictEqual([
      { method: 'GET', url: `${API}/videos/job-abc123`, headers: AUTH },
      { method: 'GET', url: `${API}/videos/job-abc123`, headers: AUTH },
      { method: 'GET', url: `${API}/videos/job-abc123`, headers: AUTH },
    ]);
  });

  it('completed (the spec\'s 200 example): the file comes from /content?index=0 with the same key, not from unsigned_urls', async () => {
    answer({ json: COMPLETED });
    const p: VideoPoll = await poll();
    if (p.state !== 'done') throw new Error('expected done');
    answer({ bytes: MP4, contentType: 'video/mp4' });
    const file = await p.fetch();
    expect('abort' in file ? { contentType: file.contentType, bytes: await bytesOf(file.body) } : null).toStrictEqual({ contentType: 'video/mp4', bytes: MP4 });
    expect(sent).toStrictEqual([
      { method: 'GET', url: `${API}/videos/job-abc123`, headers: AUTH },
      { method: 'GET', url: `${API}/videos/job-abc123/content?index=0`, headers: AUTH },
    ]);
  });

  it('the job id is escaped in the path', async () => {
    answer({ json: ACCEPTED });
    await poll('job/1 2');
    expect(sent[0]!.url).toBe(`${API}/videos/job%2F1%202`);
  });

  it('failed, cancelled, expired: provider failures with the error string (the spec types `error` as a string), an object\'s message, or the status', async () => {
    answer(
      { json: { id: 'job-abc123', status: 'failed', error: 'The upstream provider timed out.' } },
      { json: { id: 'job-abc123', status: 'failed', error: { message: 'Generation failed.' } } },
      { json: { id: 'job-abc123', status: 'cancelled' } },
      { json: { id: 'job-abc123', status: 'expired', error: null } },
    );
    const failed = (what: string) => ({ error: 'GatewayError', status: 502, type: 'provider_error', code: 'upstream_error', param: null, message: `provider 'openrouter': the video ${what}` });
    expect([await failure(poll()), await failure(poll()), await failure(poll()), await failure(poll())]).toStrictEqual([
      failed('failed: The upstream provider timed out.'),
      failed('failed: Generation failed.'),
      failed('cancelled: cancelled'),
      failed('expired: expired'),
    ]);
  });

  it('a failed job whose error names moderation is a content-policy refusal', async () => {
    answer({ json: { id: 'job-abc123', status: 'failed', error: 'Output blocked by the safety filter: the video may violate our content policy.' } });
    expect(await failure(poll())).toStrictEqual({
      error: 'GatewayError',
      status: 400,
      type: 'invalid_request_error',
      code: 'content_policy_violation',
      param: 'prompt',
      message: "The upstream provider 'openrouter' refused the request under its content policy: Output blocked by the safety filter: the video may violate our content policy.",
    });
  });

  it("a poll answered with the spec's 404 is the upstream failure, unchanged", async () => {
    answer({ status: 404, json: { error: { code: 404, message: 'Resource not found' } } });
    expect(await failure(poll())).toStrictEqual({ error: 'UpstreamError', status: 404, code: 'upstream_error', retryable: true, message: "provider 'openrouter': answered HTTP 404: Resource not found" });
  });
});
