// server/providers/gemini/video.ts (Veo): the normalized request → `:predictLongRunning`
// (duration, ratio, resolution, negative prompt, first frame or asset references), the operation
// polled with `GET /{name}`, and its three ends: a video (file URI or inline bytes), an error
// (google.rpc.Status with a gRPC code), the content filter's "success" without samples.
// No recorded answer of a Veo operation is available: every answer follows Veo's long-running
// operation as the Gemini API documents it (Gemini API reference: video generation — the start, the
// poll of `GET /v1beta/{name}`, the download of the file URI) and the @google/genai SDK
// (github.com/googleapis/js-genai) reads it; ids, URIs and messages not given there are ours.
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { geminiVideo } from '../../server/providers/gemini/video.ts';
import type { VideoPoll } from '../../server/providers/media.ts';
import { FIREBASE, fixtureJson } from './fixtures.ts';
import { GEMINI_QUOTA_429, PNG, PNG_2, PNG_B64, adapterCall, answer, bytesOf, failure, mediaRequest, pngReference, provider, reset, sent } from './media-upstream.ts';

vi.mock('../../server/upstream/http.ts', async (importOriginal) => ({ ...(await importOriginal<object>()), ...(await import('./media-upstream.ts')).fakeHttp }));

beforeEach(reset);

const API = 'https://generativelanguage.googleapis.com/v1beta';
const KEY = { 'x-goog-api-key': 'test-key' };
/** The documented answer of `:predictLongRunning` (Gemini API reference: video generation). */
const OPERATION = 'models/veo-3.1-generate-preview/operations/abc123';
/** The documented file URI of a finished operation (Gemini API reference: video generation). */
const FILE_URI = 'https://generativelanguage.googleapis.com/v1beta/files/abc123:download?alt=media';
const MP4 = Buffer.from('00000018667479706d703432', 'hex');

const start = (model: string, over: Parameters<typeof mediaRequest>[0] = {}, references = [] as (typeof pngReference)[]) => {
  const { call, warnings } = adapterCall(provider('gemini'), model);
  return { warnings, out: geminiVideo.start({ req: mediaRequest({ prompt: 'A drone shot over a glacier', ...over }), references }, call) };
};
const poll = (operation = OPERATION) => geminiVideo.poll(operation, adapterCall(provider('gemini'), 'veo-3.1-generate-preview').call);
const done = (p: VideoPoll) => {
  if (p.state !== 'done') throw new Error('expected a finished operation');
  return p.fetch();
};

describe('geminiVideo.maxReferences', () => {
  it('Veo 3.1: up to 3 (asset references); the others one first frame', () => {
    expect(['veo-3.1-generate-preview', 'veo-3.1-fast-generate-preview', 'veo-3.0-generate-001', 'veo-2.0-generate-001'].map((m) => geminiVideo.maxReferences(m))).toStrictEqual([3, 3, 1, 1]);
  });
});

describe('start: POST :predictLongRunning', () => {
  it('defaults: 8 seconds, one sample; the operation name comes back as the job', async () => {
    answer({ json: { name: OPERATION } });
    const { out, warnings } = start('veo-3.1-generate-preview');
    expect(await out).toStrictEqual({ operation: OPERATION, seconds: 8 });
    expect(sent).toStrictEqual([
      {
        method: 'POST',
        url: `${API}/models/veo-3.1-generate-preview:predictLongRunning`,
        headers: KEY,
        json: { instances: [{ prompt: 'A drone shot over a glacier' }], parameters: { durationSeconds: 8, sampleCount: 1 } },
      },
    ]);
    expect(warnings).toStrictEqual([]);
  });

  it('the documented example request (Gemini API, Veo): 16:9 at 720p, 8 s, a negative prompt, a first frame', async () => {
    answer({ json: { name: OPERATION } });
    const { out, warnings } = start('veo-3.1-generate-preview', { pixels: { w: 1280, h: 720 }, seconds: 8, negativePrompt: 'cartoon, low quality' }, [pngReference]);
    expect(await out).toStrictEqual({ operation: OPERATION, seconds: 8 });
    expect(sent[0]!.json).toStrictEqual({
      instances: [{ prompt: 'A drone shot over a glacier', image: { bytesBase64Encoded: PNG_B64, mimeType: 'image/png' } }],
      parameters: { durationSeconds: 8, sampleCount: 1, aspectRatio: '16:9', resolution: '720p', negativePrompt: 'cartoon, low quality' },
    });
    expect(warnings).toStrictEqual(['size 1280x720 sent as aspect ratio 16:9']);
  });

  it('two or three references are `asset` reference images (Veo 3.1)', async () => {
    answer({ json: { name: OPERATION } });
    await start('veo-3.1-generate-preview', {}, [pngReference, { mediaType: 'image/jpeg', data: PNG_2 }]).out;
    expect(sent[0]!.json).toStrictEqual({
      instances: [
        {
          prompt: 'A drone shot over a glacier',
          referenceImages: [
            { image: { bytesBase64Encoded: PNG_B64, mimeType: 'image/png' }, referenceType: 'asset' },
            { image: { bytesBase64Encoded: PNG_2.toString('base64'), mimeType: 'image/jpeg' }, referenceType: 'asset' },
          ],
        },
      ],
      parameters: { durationSeconds: 8, sampleCount: 1 },
    });
  });

  it.each([
    ['veo-3.1-generate-preview', 5, 6, ['seconds 5 changed to 6, the nearest duration this model makes']],
    ['veo-3.0-generate-001', 4, 4, []],
    ['veo-3.0-generate-001', 10, 8, ['seconds 10 changed to 8, the nearest duration this model makes']],
    ['veo-2.0-generate-001', 4, 5, ['seconds 4 changed to 5, the nearest duration this model makes']],
    ['veo-2.0-generate-001', 7, 7, []],
  ])('%s: %i s asked → %i s (Veo 3.x: 4/6/8, Veo 2: 5–8, ties to the longer)', async (model, asked, made, warnings) => {
    answer({ json: { name: 'operations/x' } });
    const r = start(model, { seconds: asked });
    expect(await r.out).toStrictEqual({ operation: 'operations/x', seconds: made });
    expect((sent[0]!.json as { parameters: unknown }).parameters).toStrictEqual({ durationSeconds: made, sampleCount: 1 });
    expect(r.warnings).toStrictEqual(warnings);
  });

  it('resolution from the short side: 4k on Veo 3.1 only; a size of neither ratio goes to the nearest (16:9 on a tie)', async () => {
    answer({ json: { name: 'operations/a' } }, { json: { name: 'operations/b' } }, { json: { name: 'operations/c' } });
    const a = start('veo-3.1-generate-preview', { pixels: { w: 3840, h: 2160 } });
    await a.out;
    const b = start('veo-3.0-generate-001', { pixels: { w: 2160, h: 3840 } });
    await b.out;
    const c = start('veo-3.0-generate-001', { pixels: { w: 1000, h: 1000 } });
    await c.out;
    expect(sent.map((s) => (s.json as { parameters: unknown }).parameters)).toStrictEqual([
      { durationSeconds: 8, sampleCount: 1, aspectRatio: '16:9', resolution: '4k' },
      { durationSeconds: 8, sampleCount: 1, aspectRatio: '9:16', resolution: '1080p' },
      { durationSeconds: 8, sampleCount: 1, aspectRatio: '16:9', resolution: '1080p' },
    ]);
    expect([a.warnings, b.warnings, c.warnings]).toStrictEqual([
      ['size 3840x2160 sent as aspect ratio 16:9'],
      ['size 2160x3840 sent as aspect ratio 9:16', 'size 2160x3840 sent as resolution 1080p'],
      ['size 1000x1000 sent as aspect ratio 16:9 (the nearest this model makes)', 'size 1000x1000 sent as resolution 1080p'],
    ]);
  });

  it('a ratio: kept when Veo makes it, else the nearest, named; seed, quality and style are stripped (the Gemini API rejects seed, as @google/genai enforces)', async () => {
    answer({ json: { name: 'operations/a' } }, { json: { name: 'operations/b' } });
    const a = start('veo-3.0-generate-001', { ratio: { w: 9, h: 16 }, seed: 3 });
    await a.out;
    const b = start('veo-3.0-generate-001', { ratio: { w: 4, h: 3 }, quality: 'low', style: 'vivid' });
    await b.out;
    expect(sent.map((s) => (s.json as { parameters: unknown }).parameters)).toStrictEqual([
      { durationSeconds: 8, sampleCount: 1, aspectRatio: '9:16' },
      { durationSeconds: 8, sampleCount: 1, aspectRatio: '16:9' },
    ]);
    expect([a.warnings, b.warnings]).toStrictEqual([
      ['not supported by this model, stripped: seed'],
      ['aspect ratio 4:3 changed to 16:9, the nearest this model makes', 'not supported by this model, stripped: quality, style'],
    ]);
  });

  it('an answer without an operation name is a provider failure', async () => {
    answer({ json: { done: false } });
    expect(await failure(start('veo-3.1-generate-preview').out)).toStrictEqual({
      error: 'GatewayError',
      status: 502,
      type: 'provider_error',
      code: 'upstream_error',
      param: null,
      message: "provider 'gemini-test': started no operation (no name in the answer)",
    });
  });

  it('a start-time HTTP error (an ordinary HTTP error, 429 RESOURCE_EXHAUSTED; body: Firebase vertexai/unary-failure-quota-exceeded.json) is the upstream failure, unchanged', async () => {
    answer({ status: 429, json: fixtureJson(`${FIREBASE}vertexai/unary-failure-quota-exceeded.json`) });
    expect(await failure(start('veo-3.1-generate-preview').out)).toStrictEqual(GEMINI_QUOTA_429);
  });
});

describe('poll: GET /{operation name}', () => {
  it('pending (`done: false`, or no `done` at all) is running; the name is a path under the API base, the key sent', async () => {
    answer({ json: { name: OPERATION, done: false } }, { json: { name: OPERATION, metadata: {} } });
    expect([await poll(), await poll('/' + OPERATION)]).toStrictEqual([{ state: 'running' }, { state: 'running' }]);
    expect(sent).toStrictEqual([
      { method: 'GET', url: `${API}/${OPERATION}`, headers: KEY },
      { method: 'GET', url: `${API}/${OPERATION}`, headers: KEY },
    ]);
  });

  it('the documented finished operation: done with a generatedSamples file URI on the API origin, downloaded with the key', async () => {
    answer({
      json: {
        name: OPERATION,
        done: true,
        response: {
          '@type': 'type.googleapis.com/google.ai.generativelanguage.v1beta.PredictLongRunningResponse',
          generateVideoResponse: { generatedSamples: [{ video: { uri: FILE_URI } }] },
        },
      },
    });
    const p = await poll();
    expect(p.state).toBe('done');
    answer({ bytes: MP4, contentType: 'video/mp4' });
    const file = await done(p);
    expect('abort' in file ? { contentType: file.contentType, bytes: await bytesOf(file.body) } : null).toStrictEqual({ contentType: 'video/mp4', bytes: MP4 });
    expect(sent).toStrictEqual([
      { method: 'GET', url: `${API}/${OPERATION}`, headers: KEY },
      { method: 'GET', url: FILE_URI, headers: KEY },
    ]);
  });

  it('a file on another origin is fetched without the key (as the Google provider of the Vercel AI SDK does, github.com/vercel/ai)', async () => {
    answer({ json: { name: OPERATION, done: true, response: { generateVideoResponse: { generatedSamples: [{ video: { uri: 'https://storage.googleapis.com/veo/abc.mp4?sig=1' } }] } } } });
    const p = await poll();
    answer({ bytes: MP4, contentType: 'video/mp4' });
    await done(p);
    expect(sent[1]).toStrictEqual({ method: 'GET', url: 'https://storage.googleapis.com/veo/abc.mp4?sig=1', headers: {} });
  });

  it('inline bytes: `encodedVideo` + `encoding` (the names of @google/genai, github.com/googleapis/js-genai) and Vertex-style `videos[]` with `bytesBase64Encoded` + `mimeType`; nothing more is fetched', async () => {
    answer(
      { json: { name: OPERATION, done: true, response: { generateVideoResponse: { generatedSamples: [{ video: { encodedVideo: MP4.toString('base64'), encoding: 'video/mp4' } }] } } } },
      { json: { name: OPERATION, done: true, response: { videos: [{ bytesBase64Encoded: PNG.toString('base64'), mimeType: 'video/webm' }] } } },
      { json: { name: OPERATION, done: true, response: { videos: [{ bytesBase64Encoded: MP4.toString('base64') }] } } },
    );
    const files = [await done(await poll()), await done(await poll()), await done(await poll())];
    expect(files).toStrictEqual([
      { body: MP4, contentType: 'video/mp4' },
      { body: PNG, contentType: 'video/webm' },
      { body: MP4, contentType: 'video/mp4' },
    ]);
    expect(sent.map((s) => s.url)).toStrictEqual([`${API}/${OPERATION}`, `${API}/${OPERATION}`, `${API}/${OPERATION}`]);
  });

  it('an operation error with a client gRPC code (3 INVALID_ARGUMENT, a google.rpc.Status as the Gemini API documents operations) is the client’s 400', async () => {
    answer({ json: { name: OPERATION, done: true, error: { code: 3, message: 'The prompt could not be submitted.' } } });
    expect(await failure(poll())).toStrictEqual({
      error: 'GatewayError',
      status: 400,
      type: 'invalid_request_error',
      code: 'upstream_invalid_request',
      param: null,
      message: "provider 'gemini-test': the video failed: The prompt could not be submitted. (code 3)",
    });
  });

  it('any other code (13 INTERNAL, or none) is a provider failure', async () => {
    answer({ json: { name: OPERATION, done: true, error: { code: 13, message: 'Internal error.' } } }, { json: { name: OPERATION, done: true, error: {} } });
    expect([await failure(poll()), await failure(poll())]).toStrictEqual([
      { error: 'GatewayError', status: 502, type: 'provider_error', code: 'upstream_error', param: null, message: "provider 'gemini-test': the video failed: Internal error. (code 13)" },
      { error: 'GatewayError', status: 502, type: 'provider_error', code: 'upstream_error', param: null, message: "provider 'gemini-test': the video failed: no message (code undefined)" },
    ]);
  });

  it("the content filter's success-shaped end (`raiMediaFilteredCount`, reasons, no samples; @google/genai `GenerateVideosResponse`) is a content-policy refusal", async () => {
    const reason = "We encountered an issue with the audio for your prompt. Support codes: 12345678. You won't be charged for this request.";
    answer(
      { json: { name: OPERATION, done: true, response: { generateVideoResponse: { raiMediaFilteredCount: 1, raiMediaFilteredReasons: [reason] } } } },
      { json: { name: OPERATION, done: true, response: { generateVideoResponse: { raiMediaFilteredCount: 1, generatedSamples: [] } } } },
    );
    expect([await failure(poll()), await failure(poll())]).toStrictEqual([
      {
        error: 'GatewayError',
        status: 400,
        type: 'invalid_request_error',
        code: 'content_policy_violation',
        param: 'prompt',
        message: `The upstream provider 'gemini-test' refused the request under its content policy: the video was filtered: ${reason}`,
      },
      {
        error: 'GatewayError',
        status: 400,
        type: 'invalid_request_error',
        code: 'content_policy_violation',
        param: 'prompt',
        message: "The upstream provider 'gemini-test' refused the request under its content policy: the video was filtered",
      },
    ]);
  });

  it('done without a video and without a filter count is a provider failure', async () => {
    answer({ json: { name: OPERATION, done: true, response: { generateVideoResponse: { generatedSamples: [{ video: {} }] } } } });
    expect(await failure(poll())).toStrictEqual({
      error: 'GatewayError',
      status: 502,
      type: 'provider_error',
      code: 'upstream_error',
      param: null,
      message: "provider 'gemini-test': the operation ended without a video",
    });
  });

  it('a poll answered with an HTTP error is the upstream failure, unchanged (a 404 fails over)', async () => {
    answer({ status: 404, json: { error: { code: 404, message: 'Operation not found.', status: 'NOT_FOUND' } } });
    expect(await failure(poll())).toStrictEqual({ error: 'UpstreamError', status: 404, code: 'upstream_error', retryable: true, message: "provider 'gemini-test': answered HTTP 404: Operation not found." });
  });
});
