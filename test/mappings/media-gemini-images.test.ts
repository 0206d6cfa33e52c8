// server/providers/gemini/images.ts: the normalized image request → `generateContent` with the
// IMAGE modality (ratio, Gemini 3's imageSize, seed, inline reference parts), and the answer →
// the first non-thought image part, usage from usageMetadata, in-band refusals. Answers:
// - the @google/genai SDK's test data (github.com/googleapis/js-genai, `test/system/recordings/
//   Client_Tests_generateContentStream_ML_Dev_should_stream_generate_content_with_image_output.json`:
//   real gemini-2.0-flash-preview-image-generation stream; its image base64 trimmed here to 60 characters),
//   its chunks joined here into the one answer generateContent gives;
// - the Vercel AI SDK's fixtures (github.com/vercel/ai, commit 7bff984, not on main:
//   `packages/google/src/__fixtures__/issue-10660-image-thought-signature.chunks.txt`; gemini-3-pro-image-preview,
//   real usage; the author replaced the image data by "AA==" and the thought signature);
// - Firebase's recorded text answers and error bodies (test/fixtures/recorded/upstreams/FirebaseExtended+…),
//   for the shapes of blocked prompts, safety finishes and HTTP errors, which have no image recording;
// - the Gemini API reference (image generation; `FinishReason`) for what has neither (thought images,
//   IMAGE_SAFETY, NO_IMAGE).
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { geminiImageSize, geminiImages } from '../../server/providers/gemini/images.ts';
import type * as W from '../../server/providers/gemini/wire.ts';
import { FIREBASE, fixtureJson } from './fixtures.ts';
import { PNG, PNG_2, PNG_B64, adapterCall, answer, failure, mediaRequest, pngReference, provider, reset, sent } from './media-upstream.ts';

vi.mock('../../server/upstream/http.ts', async (importOriginal) => ({ ...(await importOriginal<object>()), ...(await import('./media-upstream.ts')).fakeHttp }));

beforeEach(reset);

const BASE = 'https://generativelanguage.googleapis.com/v1beta/models/';
const KEY = { 'x-goog-api-key': 'test-key' };

/**
 * js-genai recording (…stream_generate_content_with_image_output.json), `bodySegments` 1–5:
 * three text chunks, the image chunk, the STOP chunk, as one answer (parts in order, the last
 * chunk's finishReason and usageMetadata). The base64 is as trimmed here: the PNG's first 45 bytes.
 */
const TRIMMED_PNG_B64 = 'iVBORw0KGgoAAAANSUhEUgAAAf4AAAQACAIAAACPray8AAAAiXpUWHRSYXcg';
const JS_GENAI_USAGE: W.UsageMetadata = {
  candidatesTokenCount: 1318,
  candidatesTokensDetails: [{ modality: 'IMAGE', tokenCount: 1290 }],
  promptTokenCount: 15,
  promptTokensDetails: [{ modality: 'TEXT', tokenCount: 15 }],
  totalTokenCount: 1333,
};
const JS_GENAI_ANSWER = {
  candidates: [
    {
      content: {
        parts: [
          { text: 'I' },
          { text: ' will generate an image of the Eiffel Tower at night, with a vibrant and colorful' },
          { text: ' fireworks display exploding behind it, illuminating the sky.\n\n' },
          { inlineData: { data: TRIMMED_PNG_B64, mimeType: 'image/png' } },
        ],
        role: 'model',
      },
      finishReason: 'STOP',
      index: 0,
    },
  ],
  modelVersion: 'gemini-2.0-flash-preview-image-generation',
  responseId: 'mS77aIOaD5qFvr0P1b_T4AY',
  usageMetadata: JS_GENAI_USAGE,
};

/** vercel/ai's issue-10660-image-thought-signature.chunks.txt, first `data:` line verbatim: the image part of gemini-3-pro-image-preview. */
const GEMINI_3_CHUNK = JSON.parse(
  '{"candidates":[{"content":{"parts":[{"inlineData":{"mimeType":"image/jpeg","data":"AA=="},"thoughtSignature":"live-image-thought-signature"}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":8,"candidatesTokenCount":1228,"totalTokenCount":1499,"promptTokensDetails":[{"modality":"TEXT","tokenCount":8}],"candidatesTokensDetails":[{"modality":"IMAGE","tokenCount":1120}],"thoughtsTokenCount":263,"serviceTier":"standard"},"modelVersion":"gemini-3-pro-image-preview","responseId":"aWFWapuxN-DVvdIP5PzLmQY"}',
) as W.GenerateContentResponse;

const run = (model: string, over: Parameters<typeof mediaRequest>[0] = {}, references = [] as (typeof pngReference)[]) => {
  const { call, warnings } = adapterCall(provider('gemini'), model);
  return { warnings, out: geminiImages.run({ req: mediaRequest(over), references }, call) };
};

const imageAnswer = (mimeType = 'image/png', data = PNG_B64) => ({ json: { candidates: [{ content: { role: 'model', parts: [{ inlineData: { mimeType, data } }] }, finishReason: 'STOP' }] } });

describe('geminiImageSize (long side → 1K/2K/4K, ties to the larger)', () => {
  it.each([
    [512, '1K'],
    [1024, '1K'],
    [1500, '1K'],
    [1536, '2K'],
    [2048, '2K'],
    [3000, '2K'],
    [3072, '4K'],
    [4096, '4K'],
    [8192, '4K'],
  ])('%i → %s', (side, size) => {
    expect(geminiImageSize(side)).toBe(size);
  });
});

describe('geminiImages.maxReferences', () => {
  it('2.5-flash-image: 3; the Gemini 3 image models: 5 (the request allows no more)', () => {
    expect(['gemini-2.5-flash-image', 'gemini-2.0-flash-preview-image-generation', 'gemini-3-pro-image-preview', 'gemini-3.1-flash-image-preview'].map((m) => geminiImages.maxReferences(m))).toStrictEqual([
      3, 3, 5, 5,
    ]);
  });
});

describe('requests and answers', () => {
  it('the js-genai recording: its prompt sent with TEXT and IMAGE modalities; the image part taken past the text parts, usage with 1290 IMAGE tokens', async () => {
    answer({ json: JS_GENAI_ANSWER });
    // The recording's prompt (bodySegments[0].contents[0].parts[0].text), two spaces included.
    const { out, warnings } = run('gemini-2.0-flash-preview-image-generation', { prompt: 'Generate an image of the Eiffel tower with fireworks in  the background.' });
    const result = await out;
    expect(sent).toStrictEqual([
      {
        method: 'POST',
        url: `${BASE}gemini-2.0-flash-preview-image-generation:generateContent`,
        headers: KEY,
        json: {
          contents: [{ role: 'user', parts: [{ text: 'Generate an image of the Eiffel tower with fireworks in  the background.' }] }],
          generationConfig: { responseModalities: ['TEXT', 'IMAGE'] },
        },
      },
    ]);
    expect(result).toStrictEqual({
      image: { data: Buffer.from(TRIMMED_PNG_B64, 'base64'), contentType: 'image/png' },
      usage: { inputTokens: 15, outputTokens: 1318, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, imageOutputTokens: 1290 },
      usageBody: JS_GENAI_USAGE,
    });
    // The trimmed bytes still hold the PNG header: 510×1024, the size of the recorded image.
    expect([result.image.data.readUInt32BE(16), result.image.data.readUInt32BE(20)]).toStrictEqual([510, 1024]);
    expect(warnings).toStrictEqual([]);
  });

  it('Gemini 3 (vercel/ai issue-10660 chunk): a size sent as ratio and imageSize; the image part with a thought signature is the result (signature dropped); thoughts counted as reasoning', async () => {
    answer({ json: GEMINI_3_CHUNK });
    const { out, warnings } = run('gemini-3-pro-image-preview', { pixels: { w: 2048, h: 1152 } });
    expect(await out).toStrictEqual({
      image: { data: Buffer.from([0]), contentType: 'image/jpeg' },
      usage: { inputTokens: 8, outputTokens: 1491, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 263, imageOutputTokens: 1120 },
      usageBody: { promptTokenCount: 8, candidatesTokenCount: 1228, totalTokenCount: 1499, promptTokensDetails: [{ modality: 'TEXT', tokenCount: 8 }], candidatesTokensDetails: [{ modality: 'IMAGE', tokenCount: 1120 }], thoughtsTokenCount: 263, serviceTier: 'standard' },
    });
    expect(sent[0]!.json).toStrictEqual({
      contents: [{ role: 'user', parts: [{ text: 'A cute baby sea otter' }] }],
      generationConfig: { responseModalities: ['TEXT', 'IMAGE'], imageConfig: { aspectRatio: '16:9', imageSize: '2K' } },
    });
    expect(sent[0]!.url).toBe(`${BASE}gemini-3-pro-image-preview:generateContent`);
    expect(warnings).toStrictEqual(['size 2048x1152 sent as aspect ratio 16:9']);
  });

  it('interim `thought: true` images are not the result (as the Gemini API documents thinking in Gemini 3 image models; no recording has one)', async () => {
    answer({
      json: {
        candidates: [
          {
            content: {
              role: 'model',
              parts: [
                { inlineData: { mimeType: 'image/png', data: PNG_2.toString('base64') }, thought: true },
                { text: 'Here is the otter.' },
                { inlineData: { mimeType: 'image/png', data: PNG_B64 }, thoughtSignature: 'c2ln' },
              ],
            },
            finishReason: 'STOP',
          },
        ],
      },
    });
    expect(await run('gemini-3-pro-image-preview').out).toStrictEqual({ image: { data: PNG, contentType: 'image/png' }, usage: null });
  });

  it('an image part without a mimeType is taken as PNG', async () => {
    answer({ json: { candidates: [{ content: { parts: [{ inlineData: { data: PNG_B64 } }] } }] } });
    expect(await run('gemini-2.5-flash-image').out).toStrictEqual({ image: { data: PNG, contentType: 'image/png' }, usage: null });
  });

  it('reference images go as inline parts after the prompt, in order', async () => {
    answer(imageAnswer());
    await run('gemini-2.5-flash-image', { prompt: 'Put this cat on the moon' }, [pngReference, { mediaType: 'image/jpeg', data: PNG_2 }]).out;
    expect(sent[0]!.json).toStrictEqual({
      contents: [
        {
          role: 'user',
          parts: [{ text: 'Put this cat on the moon' }, { inlineData: { mimeType: 'image/png', data: PNG_B64 } }, { inlineData: { mimeType: 'image/jpeg', data: PNG_2.toString('base64') } }],
        },
      ],
      generationConfig: { responseModalities: ['TEXT', 'IMAGE'] },
    });
  });
});

describe('sizes and fields', () => {
  const configOf = async (model: string, over: Parameters<typeof mediaRequest>[0]) => {
    answer(imageAnswer());
    const { out, warnings } = run(model, over);
    await out;
    return { generationConfig: (sent.at(-1)!.json as W.GenerateContentRequest).generationConfig, warnings };
  };

  it('gemini-2.5-flash-image: a pixel size as its ratio; the pixel count is not selectable (named unless 1024)', async () => {
    expect(await configOf('gemini-2.5-flash-image', { pixels: { w: 1920, h: 1080 } })).toStrictEqual({
      generationConfig: { responseModalities: ['TEXT', 'IMAGE'], imageConfig: { aspectRatio: '16:9' } },
      warnings: ['size 1920x1080 sent as aspect ratio 16:9', 'size: this model makes about 1024 pixels on the long side, not 1920'],
    });
    expect(await configOf('gemini-2.5-flash-image', { pixels: { w: 1024, h: 1024 } })).toStrictEqual({
      generationConfig: { responseModalities: ['TEXT', 'IMAGE'], imageConfig: { aspectRatio: '1:1' } },
      warnings: ['size 1024x1024 sent as aspect ratio 1:1'],
    });
  });

  it('a size of a ratio Gemini does not make: the nearest one, named', async () => {
    expect(await configOf('gemini-3-pro-image-preview', { pixels: { w: 4000, h: 1000 } })).toStrictEqual({
      generationConfig: { responseModalities: ['TEXT', 'IMAGE'], imageConfig: { aspectRatio: '21:9', imageSize: '4K' } },
      warnings: ['size 4000x1000 sent as aspect ratio 21:9 (the nearest this model makes)'],
    });
  });

  it('a ratio: kept when Gemini makes it, else the nearest (named); gemini-3.1 also makes the 1:8 strips', async () => {
    expect(await configOf('gemini-2.5-flash-image', { ratio: { w: 4, h: 5 } })).toStrictEqual({
      generationConfig: { responseModalities: ['TEXT', 'IMAGE'], imageConfig: { aspectRatio: '4:5' } },
      warnings: [],
    });
    expect(await configOf('gemini-2.5-flash-image', { ratio: { w: 1, h: 8 } })).toStrictEqual({
      generationConfig: { responseModalities: ['TEXT', 'IMAGE'], imageConfig: { aspectRatio: '9:16' } },
      warnings: ['aspect ratio 1:8 changed to 9:16, the nearest this model makes'],
    });
    expect(await configOf('gemini-3.1-flash-image-preview', { ratio: { w: 1, h: 8 } })).toStrictEqual({
      generationConfig: { responseModalities: ['TEXT', 'IMAGE'], imageConfig: { aspectRatio: '1:8' } },
      warnings: [],
    });
  });

  it('seed goes to generationConfig.seed; negative_prompt, quality and style are stripped and named', async () => {
    expect(await configOf('gemini-2.5-flash-image', { seed: 42, negativePrompt: 'blurry', quality: 'low', style: 'vivid' })).toStrictEqual({
      generationConfig: { responseModalities: ['TEXT', 'IMAGE'], seed: 42 },
      warnings: ['not supported by this model, stripped: negative_prompt, quality, style'],
    });
  });
});

describe('refusals and failures', () => {
  it.each([
    ['a blocked prompt, with its reason and message', 'vertexai/unary-failure-prompt-blocked-safety-with-message.json', 'the prompt was blocked (SAFETY: Reasons)'],
    ['a blocked prompt without a message', 'vertexai/unary-failure-prompt-blocked-safety.json', 'the prompt was blocked (SAFETY)'],
    ['a SAFETY finish without an image (text only)', 'googleai/unary-failure-finish-reason-safety.json', 'no image was generated (finishReason SAFETY)'],
  ])('%s (Firebase %s) is a content-policy refusal', async (_, fixture, why) => {
    answer({ json: fixtureJson(`${FIREBASE}${fixture}`) });
    expect(await failure(run('gemini-2.5-flash-image').out)).toStrictEqual({
      error: 'GatewayError',
      status: 400,
      type: 'invalid_request_error',
      code: 'content_policy_violation',
      param: 'prompt',
      message: `The upstream provider 'gemini-test' refused the request under its content policy: ${why}`,
    });
  });

  it('IMAGE_SAFETY with a finishMessage (a finish reason of the Gemini API reference, `FinishReason`; message text ours)', async () => {
    answer({ json: { candidates: [{ content: { role: 'model' }, finishReason: 'IMAGE_SAFETY', finishMessage: 'Unable to show the generated image.' }] } });
    expect(await failure(run('gemini-3-pro-image-preview').out)).toStrictEqual({
      error: 'GatewayError',
      status: 400,
      type: 'invalid_request_error',
      code: 'content_policy_violation',
      param: 'prompt',
      message: "The upstream provider 'gemini-test' refused the request under its content policy: no image was generated (finishReason IMAGE_SAFETY: Unable to show the generated image.)",
    });
  });

  it('text only with STOP (Firebase googleai/unary-success-basic-reply-short.json) is a provider failure, retried elsewhere', async () => {
    answer({ json: fixtureJson(`${FIREBASE}googleai/unary-success-basic-reply-short.json`) });
    expect(await failure(run('gemini-2.5-flash-image').out)).toStrictEqual({
      error: 'UpstreamError',
      status: 502,
      code: 'upstream_error',
      retryable: true,
      message: "provider 'gemini-test': answered without an image (finishReason STOP)",
    });
  });

  it('NO_IMAGE (Gemini API reference, `FinishReason`) and an answer without candidates are provider failures too', async () => {
    answer({ json: { candidates: [{ content: { role: 'model', parts: [{ text: 'I cannot draw that.' }] }, finishReason: 'NO_IMAGE' }] } }, { json: { candidates: [] } });
    expect(await failure(run('gemini-2.5-flash-image').out)).toStrictEqual({
      error: 'UpstreamError',
      status: 502,
      code: 'upstream_error',
      retryable: true,
      message: "provider 'gemini-test': answered without an image (finishReason NO_IMAGE)",
    });
    expect(await failure(run('gemini-2.5-flash-image').out)).toStrictEqual({
      error: 'UpstreamError',
      status: 502,
      code: 'upstream_error',
      retryable: true,
      message: "provider 'gemini-test': answered without an image (finishReason none)",
    });
  });

  it('an HTTP error (Firebase googleai/unary-failure-api-key.json as a 400) is the upstream failure, unchanged', async () => {
    answer({ status: 400, json: fixtureJson(`${FIREBASE}googleai/unary-failure-api-key.json`) });
    expect(await failure(run('gemini-2.5-flash-image').out)).toStrictEqual({
      error: 'UpstreamError',
      status: 400,
      code: 'upstream_rejected',
      retryable: false,
      message: "provider 'gemini-test': answered HTTP 400: API key not valid. Please pass a valid API key.",
    });
  });
});
