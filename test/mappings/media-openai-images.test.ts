// server/providers/openai/images.ts: the normalized image request → `/images/generations` (JSON)
// or `/images/edits` (multipart), each model family's sizes and fields, and OpenAI's answer → the
// image, its usage and the content-policy refusals. Answers: recordings under
// test/fixtures/recorded/upstreams/vercel+ai/packages/openai/src/image/__fixtures__/ (b64 trimmed by
// vercel/ai), the examples of OpenAI's OpenAPI specification (github.com/openai/openai-openapi, `openapi.yaml`)
// and, for refusals (no recording), OpenAI's error envelope as its API returns it for image requests
// (`moderation_blocked` for the GPT image models, `content_policy_violation` for DALL·E).
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { openAiImageFamily, openAiImages } from '../../server/providers/openai/images.ts';
import type * as W from '../../server/providers/openai/wire.ts';
import { VERCEL, atString, fixtureJson } from './fixtures.ts';
import { PNG, PNG_2, adapterCall, answer, failure, mediaRequest, pngReference, provider, reset, sent, wireForm } from './media-upstream.ts';

vi.mock('../../server/upstream/http.ts', async (importOriginal) => ({ ...(await importOriginal<object>()), ...(await import('./media-upstream.ts')).fakeHttp }));

beforeEach(reset);

const DIR = `${VERCEL}openai/src/image/__fixtures__/`;
/** Recorded `/images/generations` answer: two images, the first with a `revised_prompt`, no output_format, no usage. */
const IMAGE = fixtureJson<W.Images>(`${DIR}openai-image.json`);
/** Recorded `/images/edits` answer: one image, `output_format: "png"`, `background`, `quality`, `size`, no usage. */
const IMAGE_EDIT = fixtureJson<W.Images>(`${DIR}openai-image-edit.json`);
/** Recorded 400 for `response_format` sent to a GPT image model (code `unknown_parameter`). */
const RESPONSE_FORMAT_ERROR = fixtureJson(`${DIR}gpt-image-response-format-error.json`);

const GENERATIONS = 'https://api.openai.com/v1/images/generations';
const EDITS = 'https://api.openai.com/v1/images/edits';
const AUTH = { authorization: 'Bearer test-key' };
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

const run = (model: string, over: Parameters<typeof mediaRequest>[0] = {}, references = [] as (typeof pngReference)[]) => {
  const { call, warnings } = adapterCall(provider('openai'), model);
  return { warnings, out: openAiImages.run({ req: mediaRequest(over), references }, call) };
};

describe('openAiImageFamily', () => {
  it.each([
    ['dall-e-3', { sizes: ['1024x1024', '1792x1024', '1024x1792'], fields: ['style'], references: 0, base64Param: true }],
    ['dall-e-2', { sizes: ['256x256', '512x512', '1024x1024'], fields: [], references: 1, base64Param: true }],
    ['gpt-image-2', { sizes: 'any16', fields: ['quality'], references: 5, base64Param: false }],
    ['gpt-image-2-2026-04-21', { sizes: 'any16', fields: ['quality'], references: 5, base64Param: false }],
    ['gpt-image-1', { sizes: ['1024x1024', '1536x1024', '1024x1536'], fields: ['quality'], references: 5, base64Param: false }],
    ['gpt-image-1.5', { sizes: ['1024x1024', '1536x1024', '1024x1536'], fields: ['quality'], references: 5, base64Param: false }],
    ['chatgpt-image-latest', { sizes: ['1024x1024', '1536x1024', '1024x1536'], fields: ['quality'], references: 5, base64Param: false }],
  ])('%s', (model, family) => {
    expect(openAiImageFamily(model)).toStrictEqual(family);
  });

  it('maxReferences: dall-e-3 cannot edit, dall-e-2 takes one image, the GPT image models five', () => {
    expect(['dall-e-3', 'dall-e-2', 'gpt-image-1', 'gpt-image-2'].map((m) => openAiImages.maxReferences(m))).toStrictEqual([0, 1, 5, 5]);
  });
});

describe('generations (no reference image): JSON to /images/generations', () => {
  it('gpt-image-1: model and prompt only, no response_format (the recorded 400 shows GPT image models refuse it); the edit recording decodes to its PNG', async () => {
    answer({ json: IMAGE_EDIT });
    const { out, warnings } = run('gpt-image-1');
    const result = await out;
    expect(sent).toStrictEqual([{ method: 'POST', url: GENERATIONS, headers: AUTH, json: { model: 'gpt-image-1', prompt: 'A cute baby sea otter' } }]);
    expect(result).toStrictEqual({ image: { data: Buffer.from(atString(IMAGE_EDIT, 'data', 0, 'b64_json'), 'base64'), contentType: 'image/png' }, usage: null });
    expect(result.image.data.subarray(0, 8)).toStrictEqual(PNG_SIGNATURE);
    expect(warnings).toStrictEqual([]);
  });

  it('dall-e-3: asked for b64_json, size and style kept; the first image of the recorded answer with its revised_prompt (openai-image.json)', async () => {
    answer({ json: IMAGE });
    const { out, warnings } = run('dall-e-3', { pixels: { w: 1792, h: 1024 }, style: 'natural' });
    expect(await out).toStrictEqual({
      image: {
        data: Buffer.from(atString(IMAGE, 'data', 0, 'b64_json'), 'base64'),
        contentType: 'image/png',
        // openai-image.json, data[0].revised_prompt
        revisedPrompt:
          "A small and adorable baby sea otter. This little creature is covered in a thick and fluffy brown fur, its tiny paws are slightly visible. The otter has bright, curious eyes and it's floating on its back on a calm sea, surrounded by floating seaweed.",
      },
      usage: null,
    });
    expect(sent).toStrictEqual([
      { method: 'POST', url: GENERATIONS, headers: AUTH, json: { model: 'dall-e-3', prompt: 'A cute baby sea otter', size: '1792x1024', style: 'natural', response_format: 'b64_json' } },
    ]);
    expect(warnings).toStrictEqual([]);
  });

  it("usage of a GPT image model (spec example \"Generate image\"): every output token an image token, the input's image tokens apart; the usage object passed on", async () => {
    // openapi.yaml, `/images/generations` example "Generate image": its b64_json is "..." in the spec,
    // replaced here by the recorded PNG of openai-image-edit.json.
    const usage = { total_tokens: 100, input_tokens: 50, output_tokens: 50, input_tokens_details: { text_tokens: 10, image_tokens: 40 } };
    answer({ json: { created: 1713833628, data: [{ b64_json: atString(IMAGE_EDIT, 'data', 0, 'b64_json') }], usage } });
    // The spec example's request: gpt-image-1.5, size 1024x1024.
    const { out } = run('gpt-image-1.5', { pixels: { w: 1024, h: 1024 } });
    expect(await out).toStrictEqual({
      image: { data: Buffer.from(atString(IMAGE_EDIT, 'data', 0, 'b64_json'), 'base64'), contentType: 'image/png' },
      usage: { inputTokens: 50, outputTokens: 50, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, imageOutputTokens: 50, imageInputTokens: 40 },
      usageBody: usage,
    });
    expect(sent.map((s) => s.json)).toStrictEqual([{ model: 'gpt-image-1.5', prompt: 'A cute baby sea otter', size: '1024x1024' }]);
  });

  it('usage without input_tokens_details (the OpenAI `ImagesUsage` schema asks for them, but an OpenAI-shaped server may leave them out): no image input', async () => {
    const usage = { input_tokens: 12, output_tokens: 4160 };
    answer({ json: { data: [{ b64_json: PNG.toString('base64') }], usage } });
    expect(await run('gpt-image-1').out).toStrictEqual({
      image: { data: PNG, contentType: 'image/png' },
      usage: { inputTokens: 12, outputTokens: 4160, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, imageOutputTokens: 4160, imageInputTokens: 0 },
      usageBody: usage,
    });
  });

  it(
    "output_tokens_details splits the output (ImageGenOutputTokensDetails: image and text tokens): only its image tokens are image output (values ours)",
    async () => {
      const usage = { input_tokens: 50, output_tokens: 4260, input_tokens_details: { text_tokens: 50, image_tokens: 0 }, output_tokens_details: { image_tokens: 4160, text_tokens: 100 }, total_tokens: 4310 };
      answer({ json: { data: [{ b64_json: PNG.toString('base64') }], usage } });
      expect((await run('gpt-image-1.5').out).usage).toStrictEqual({
        inputTokens: 50,
        outputTokens: 4260,
        cachedTokens: 0,
        cacheWriteTokens: 0,
        reasoningTokens: 0,
        imageOutputTokens: 4160,
        imageInputTokens: 0,
      });
    },
  );

  it.each([
    ['jpeg', 'image/jpeg'],
    ['jpg', 'image/jpeg'],
    ['webp', 'image/webp'],
    ['png', 'image/png'],
  ])('output_format %s → %s (the echo of GPT image models, the OpenAI `ImagesResponse` schema)', async (format, type) => {
    answer({ json: { data: [{ b64_json: PNG.toString('base64') }], output_format: format } });
    expect(await run('gpt-image-1').out).toStrictEqual({ image: { data: PNG, contentType: type }, usage: null });
  });

  it('an entry without bytes (a DALL·E url) is skipped for the next one that has them', async () => {
    answer({ json: { data: [{ url: 'https://oaidalleapiprodscus.blob.core.windows.net/private/x.png' }, { b64_json: '' }, { b64_json: PNG_2.toString('base64') }] } });
    expect(await run('dall-e-2').out).toStrictEqual({ image: { data: PNG_2, contentType: 'image/png' }, usage: null });
  });

  it('an answer without any image bytes is a provider failure (retried elsewhere)', async () => {
    answer({ json: { created: 1, data: [] } }, { json: { created: 1, data: [{ url: 'https://example.com/a.png' }] } });
    const expected = { error: 'UpstreamError', status: 502, code: 'upstream_error', retryable: true, message: "provider 'openai-test': answered without an image" };
    expect(await failure(run('dall-e-3').out)).toStrictEqual(expected);
    expect(await failure(run('dall-e-3').out)).toStrictEqual(expected);
  });
});

describe('sizes and fields per family', () => {
  const sizeOf = async (model: string, over: Parameters<typeof mediaRequest>[0]) => {
    answer({ json: IMAGE_EDIT });
    const { out, warnings } = run(model, over);
    await out;
    return { json: sent.at(-1)!.json, warnings };
  };

  it('gpt-image-1: a pixel size goes as the nearest of its three, named when changed', async () => {
    expect(await sizeOf('gpt-image-1', { pixels: { w: 1000, h: 1000 } })).toStrictEqual({
      json: { model: 'gpt-image-1', prompt: 'A cute baby sea otter', size: '1024x1024' },
      warnings: ['size 1000x1000 changed to 1024x1024, the nearest this model makes'],
    });
    expect(await sizeOf('gpt-image-1', { pixels: { w: 1536, h: 1024 } })).toStrictEqual({ json: { model: 'gpt-image-1', prompt: 'A cute baby sea otter', size: '1536x1024' }, warnings: [] });
  });

  it('gpt-image-1: a ratio goes as the size of nearest ratio (16:9 → 1536x1024, 3:2), always named', async () => {
    expect(await sizeOf('gpt-image-1', { ratio: { w: 16, h: 9 } })).toStrictEqual({
      json: { model: 'gpt-image-1', prompt: 'A cute baby sea otter', size: '1536x1024' },
      warnings: ['aspect ratio 16:9 changed to size 1536x1024 (3:2), the nearest this model makes'],
    });
    expect(await sizeOf('gpt-image-1', { ratio: { w: 2, h: 3 } })).toStrictEqual({
      json: { model: 'gpt-image-1', prompt: 'A cute baby sea otter', size: '1024x1536' },
      warnings: ['aspect ratio 2:3 sent as size 1024x1536'],
    });
  });

  it('dall-e-3 and dall-e-2: their own size lists', async () => {
    expect(await sizeOf('dall-e-3', { pixels: { w: 1920, h: 1080 } })).toStrictEqual({
      json: { model: 'dall-e-3', prompt: 'A cute baby sea otter', size: '1792x1024', response_format: 'b64_json' },
      warnings: ['size 1920x1080 changed to 1792x1024, the nearest this model makes'],
    });
    expect(await sizeOf('dall-e-2', { pixels: { w: 500, h: 500 } })).toStrictEqual({
      json: { model: 'dall-e-2', prompt: 'A cute baby sea otter', size: '512x512', response_format: 'b64_json' },
      warnings: ['size 500x500 changed to 512x512, the nearest this model makes'],
    });
  });

  it('gpt-image-2: any size, sides rounded to multiples of 16 (1080 → 1088)', async () => {
    expect(await sizeOf('gpt-image-2', { pixels: { w: 1920, h: 1080 } })).toStrictEqual({
      json: { model: 'gpt-image-2', prompt: 'A cute baby sea otter', size: '1920x1088' },
      warnings: ['size 1920x1080 sent as size 1920x1088'],
    });
    expect(await sizeOf('gpt-image-2', { pixels: { w: 1280, h: 720 } })).toStrictEqual({ json: { model: 'gpt-image-2', prompt: 'A cute baby sea otter', size: '1280x720' }, warnings: [] });
  });

  it('gpt-image-2: a ratio at about one megapixel; beyond 3:1 cut to 3:1; at most 3840 long and 2160 short', async () => {
    expect(await sizeOf('gpt-image-2', { ratio: { w: 16, h: 9 } })).toStrictEqual({
      json: { model: 'gpt-image-2', prompt: 'A cute baby sea otter', size: '1360x768' },
      warnings: ['aspect ratio 16:9 sent as size 1360x768'],
    });
    expect(await sizeOf('gpt-image-2', { ratio: { w: 1, h: 4 } })).toStrictEqual({
      json: { model: 'gpt-image-2', prompt: 'A cute baby sea otter', size: '688x2048' },
      warnings: ['aspect ratio 1:4 sent as size 688x2048'],
    });
    expect(await sizeOf('gpt-image-2', { pixels: { w: 4096, h: 512 } })).toStrictEqual({
      json: { model: 'gpt-image-2', prompt: 'A cute baby sea otter', size: '3840x1280' },
      warnings: ['size 4096x512 sent as size 3840x1280'],
    });
    expect(await sizeOf('gpt-image-2', { pixels: { w: 4000, h: 4000 } })).toStrictEqual({
      json: { model: 'gpt-image-2', prompt: 'A cute baby sea otter', size: '2160x2160' },
      warnings: ['size 4000x4000 sent as size 2160x2160'],
    });
  });

  it('quality goes to the GPT image models; style to dall-e-3; the rest is stripped and named', async () => {
    const all = { quality: 'medium', style: 'vivid', seed: 7, negativePrompt: 'blurry' } as const;
    expect(await sizeOf('gpt-image-1', all)).toStrictEqual({
      json: { model: 'gpt-image-1', prompt: 'A cute baby sea otter', quality: 'medium' },
      warnings: ['not supported by this model, stripped: negative_prompt, seed, style'],
    });
    expect(await sizeOf('dall-e-3', all)).toStrictEqual({
      json: { model: 'dall-e-3', prompt: 'A cute baby sea otter', style: 'vivid', response_format: 'b64_json' },
      warnings: ['not supported by this model, stripped: negative_prompt, seed, quality'],
    });
    expect(await sizeOf('dall-e-2', all)).toStrictEqual({
      json: { model: 'dall-e-2', prompt: 'A cute baby sea otter', response_format: 'b64_json' },
      warnings: ['not supported by this model, stripped: negative_prompt, seed, quality, style'],
    });
  });
});

describe('edits (reference images): multipart to /images/edits', () => {
  it('one reference: the fields, then the file as `image` (the recorded edit answer decodes to its PNG)', async () => {
    answer({ json: IMAGE_EDIT });
    const { out, warnings } = run('gpt-image-1', { prompt: 'Add a hat', pixels: { w: 1024, h: 1024 }, quality: 'low' }, [pngReference]);
    expect(await out).toStrictEqual({ image: { data: Buffer.from(atString(IMAGE_EDIT, 'data', 0, 'b64_json'), 'base64'), contentType: 'image/png' }, usage: null });
    expect(sent).toStrictEqual([
      {
        method: 'POST',
        url: EDITS,
        headers: AUTH,
        form: [
          { name: 'model', value: 'gpt-image-1' },
          { name: 'prompt', value: 'Add a hat' },
          { name: 'size', value: '1024x1024' },
          { name: 'quality', value: 'low' },
          { name: 'image', filename: 'image-1.png', contentType: 'image/png', data: PNG },
        ],
      },
    ]);
    expect(warnings).toStrictEqual([]);
  });

  it('several references: each file as `image[]`, named by its type (jpeg → .jpg), as the form reads on the wire', async () => {
    answer({ json: IMAGE_EDIT });
    const jpeg = { mediaType: 'image/jpeg', data: PNG_2 };
    await run('gpt-image-1.5', { prompt: 'Combine them' }, [pngReference, jpeg, { mediaType: 'image/webp', data: PNG }]).out;
    expect(await wireForm(sent[0]!.form!)).toStrictEqual([
      ['model', 'gpt-image-1.5'],
      ['prompt', 'Combine them'],
      ['image[]', { filename: 'image-1.png', type: 'image/png', base64: PNG.toString('base64') }],
      ['image[]', { filename: 'image-2.jpg', type: 'image/jpeg', base64: PNG_2.toString('base64') }],
      ['image[]', { filename: 'image-3.webp', type: 'image/webp', base64: PNG.toString('base64') }],
    ]);
    expect(sent[0]!.url).toBe(EDITS);
  });

  it('dall-e-2 edit: one `image`, asked for b64_json', async () => {
    answer({ json: IMAGE });
    await run('dall-e-2', { prompt: 'Add a hat', pixels: { w: 256, h: 256 } }, [pngReference]).out;
    expect(sent[0]!.form).toStrictEqual([
      { name: 'model', value: 'dall-e-2' },
      { name: 'prompt', value: 'Add a hat' },
      { name: 'size', value: '256x256' },
      { name: 'response_format', value: 'b64_json' },
      { name: 'image', filename: 'image-1.png', contentType: 'image/png', data: PNG },
    ]);
  });
});

describe('failures', () => {
  it('the recorded 400 for an unknown parameter stays an upstream rejection (not retried, not a policy refusal)', async () => {
    answer({ status: 400, json: RESPONSE_FORMAT_ERROR });
    expect(await failure(run('gpt-image-1').out)).toStrictEqual({
      error: 'UpstreamError',
      status: 400,
      code: 'upstream_rejected',
      retryable: false,
      message: "provider 'openai-test': answered HTTP 400: Unknown parameter: 'response_format'.",
    });
  });

  it("GPT image models' `moderation_blocked` 400 is a content-policy refusal with OpenAI's reason (shape: OpenAI's error envelope, no recording)", async () => {
    answer({
      status: 400,
      json: {
        error: {
          message: 'Your request was rejected by the safety system. If you believe this is an error, contact us at help.openai.com and include the request ID req_0123. safety_violations=[sexual].',
          type: 'image_generation_user_error',
          param: null,
          code: 'moderation_blocked',
          moderation_details: { moderation_stage: 'output', categories: ['sexual'] },
        },
      },
    });
    expect(await failure(run('gpt-image-1').out)).toStrictEqual({
      error: 'GatewayError',
      status: 400,
      type: 'invalid_request_error',
      code: 'content_policy_violation',
      param: 'prompt',
      message:
        "The upstream provider 'openai-test' refused the request under its content policy: Your request was rejected by the safety system. If you believe this is an error, contact us at help.openai.com and include the request ID req_0123. safety_violations=[sexual].",
    });
  });

  it("DALL·E's `content_policy_violation` 400 likewise, on an edit too (shape: OpenAI's error envelope, no recording)", async () => {
    const body = { error: { message: 'Your request was rejected as a result of our safety system.', type: 'invalid_request_error', param: null, code: 'content_policy_violation' } };
    answer({ status: 400, json: body });
    expect(await failure(run('dall-e-2', {}, [pngReference]).out)).toStrictEqual({
      error: 'GatewayError',
      status: 400,
      type: 'invalid_request_error',
      code: 'content_policy_violation',
      param: 'prompt',
      message: "The upstream provider 'openai-test' refused the request under its content policy: Your request was rejected as a result of our safety system.",
    });
  });

  it('the same code on another status is no refusal: a 5xx stays a retryable upstream failure', async () => {
    answer({ status: 500, json: { error: { message: 'The server had an error.', type: 'server_error', param: null, code: 'content_policy_violation' } } });
    expect(await failure(run('dall-e-3').out)).toStrictEqual({
      error: 'UpstreamError',
      status: 500,
      code: 'upstream_error',
      retryable: true,
      message: "provider 'openai-test': answered HTTP 500: The server had an error.",
    });
  });
});

describe('provider settings', () => {
  it("base_url (an OpenAI-shaped image server) and the operator's headers; an unknown model is treated as a GPT image model", async () => {
    answer({ json: IMAGE_EDIT });
    const p = provider('openai', { base_url: 'https://images.example.com/v1', headers: { 'OpenAI-Project': 'proj_1' } });
    const { call } = adapterCall(p, 'my-image-model');
    await openAiImages.run({ req: mediaRequest({ ratio: { w: 1, h: 1 } }), references: [] }, call);
    expect(sent).toStrictEqual([
      {
        method: 'POST',
        url: 'https://images.example.com/v1/images/generations',
        headers: { authorization: 'Bearer test-key', 'OpenAI-Project': 'proj_1' },
        json: { model: 'my-image-model', prompt: 'A cute baby sea otter', size: '1024x1024' },
      },
    ]);
  });
});
