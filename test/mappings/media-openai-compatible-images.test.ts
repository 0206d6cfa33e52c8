// server/providers/openai-compatible/images.ts: image output from OpenRouter (and servers that
// follow it) through chat completions with `modalities` and `image_config`, the image back as a
// data URI in `message.images`. No recorded answer of an OpenRouter chat completion with
// `message.images` is available: answers follow OpenRouter's OpenAPI document
// (github.com/OpenRouterTeam/typescript-sdk, `.speakeasy/in.openapi.yaml`: `ChatAssistantImages`,
// `ChatUsage` example, the `{error: {code, message}}` envelope) and OpenRouter's image-generation guide
// (openrouter.ai/docs, multimodal image generation: `modalities`, `image_config`, usage's
// `completion_tokens_details.image_tokens`), with a real 1×1 PNG for the image.
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { openRouterImages } from '../../server/providers/openai-compatible/images.ts';
import type * as W from '../../server/providers/openai-compatible/wire.ts';
import { PNG, PNG_2, PNG_B64, adapterCall, answer, failure, mediaRequest, pngReference, provider, reset, sent } from './media-upstream.ts';

vi.mock('../../server/upstream/http.ts', async (importOriginal) => ({ ...(await importOriginal<object>()), ...(await import('./media-upstream.ts')).fakeHttp }));

beforeEach(reset);

const URL = 'https://openrouter.ai/api/v1/chat/completions';
const AUTH = { authorization: 'Bearer test-key' };
const GEMINI = 'google/gemini-2.5-flash-image';
/** The builtin OpenRouter provider (openai-compatible/index.ts). */
const openrouter = () => provider('openai-compatible', { id: 'openrouter', base_url: 'https://openrouter.ai/api/v1' });

/** A chat completion carrying images as `ChatAssistantImages` items (`{type, image_url: {url}}`, OpenRouter's image-generation guide). */
const completion = (urls: (string | null)[], usage?: W.ImageChatCompletion['usage'], finish = 'stop') => ({
  json: {
    id: 'gen-1',
    object: 'chat.completion',
    model: GEMINI,
    choices: [{ index: 0, message: { role: 'assistant', content: '', images: urls.map((url) => (url === null ? null : { type: 'image_url', image_url: { url } })) }, finish_reason: finish }],
    ...(usage ? { usage } : {}),
  },
});

const run = (model: string, over: Parameters<typeof mediaRequest>[0] = {}, references = [] as (typeof pngReference)[]) => {
  const { call, warnings } = adapterCall(openrouter(), model);
  return { warnings, out: openRouterImages.run({ req: mediaRequest(over), references }, call) };
};

describe('openRouterImages', () => {
  it('maxReferences: 5 for any model', () => {
    expect([GEMINI, 'black-forest-labs/flux.2-pro'].map((m) => openRouterImages.maxReferences(m))).toStrictEqual([5, 5]);
  });

  it('a Gemini model: the prompt as the user message, image and text modalities; the data URI decoded, usage (reasoning from the details) and the usage object passed on', async () => {
    // in.openapi.yaml ChatUsage example, its prompt_tokens_details (cached tokens) left out: the last test has them.
    const usage = { completion_tokens: 15, completion_tokens_details: { reasoning_tokens: 5 }, cost: 0.0012, is_byok: false, prompt_tokens: 10, total_tokens: 25 };
    answer(completion([`data:image/png;base64,${PNG_B64}`], usage));
    const { out, warnings } = run(GEMINI);
    expect(await out).toStrictEqual({
      image: { data: PNG, contentType: 'image/png' },
      usage: { inputTokens: 10, outputTokens: 15, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 5 },
      usageBody: usage,
    });
    expect(sent).toStrictEqual([
      { method: 'POST', url: URL, headers: AUTH, json: { model: GEMINI, messages: [{ role: 'user', content: 'A cute baby sea otter' }], modalities: ['image', 'text'] } },
    ]);
    expect(warnings).toStrictEqual([]);
  });

  it('a Gemini model with a size: image_config with the ratio and the 1K/2K/4K size of its long side (the example of the OpenRouter image-generation guide: 16:9, 2K)', async () => {
    answer(completion([`data:image/png;base64,${PNG_B64}`]));
    const { out, warnings } = run(GEMINI, { pixels: { w: 2048, h: 1152 } });
    expect(await out).toStrictEqual({ image: { data: PNG, contentType: 'image/png' }, usage: null });
    expect(sent[0]!.json).toStrictEqual({
      model: GEMINI,
      messages: [{ role: 'user', content: 'A cute baby sea otter' }],
      modalities: ['image', 'text'],
      image_config: { aspect_ratio: '16:9', image_size: '2K' },
    });
    expect(warnings).toStrictEqual(['size 2048x1152 sent as aspect ratio 16:9']);
  });

  it('an image-only model (Flux): modalities ["image"], only the ratio of a size is sent (named)', async () => {
    answer(completion([`data:image/png;base64,${PNG_B64}`]));
    const { out, warnings } = run('black-forest-labs/flux.2-pro', { pixels: { w: 1024, h: 1024 } });
    await out;
    expect(sent[0]!.json).toStrictEqual({
      model: 'black-forest-labs/flux.2-pro',
      messages: [{ role: 'user', content: 'A cute baby sea otter' }],
      modalities: ['image'],
      image_config: { aspect_ratio: '1:1' },
    });
    expect(warnings).toStrictEqual(['size 1024x1024 sent as aspect ratio 1:1', 'size: only the aspect ratio is sent to this model (1024 pixels on the long side is not)']);
  });

  it.each(['sourceful/riverflow-v2-fast', 'bytedance-seed/seedream-4.5', 'recraft/recraft-v3'])('%s is image-only too', async (model) => {
    answer(completion([`data:image/png;base64,${PNG_B64}`]));
    await run(model).out;
    expect((sent[0]!.json as W.ImageChatRequest).modalities).toStrictEqual(['image']);
  });

  it('a ratio goes as the nearest of the ten (3:1 → 21:9, named); seed forwarded, the other fields stripped and named', async () => {
    answer(completion([`data:image/png;base64,${PNG_B64}`]));
    const { out, warnings } = run(GEMINI, { ratio: { w: 3, h: 1 }, seed: 11, quality: 'medium', style: 'natural', negativePrompt: 'text' });
    await out;
    expect(sent[0]!.json).toStrictEqual({
      model: GEMINI,
      messages: [{ role: 'user', content: 'A cute baby sea otter' }],
      modalities: ['image', 'text'],
      image_config: { aspect_ratio: '21:9' },
      seed: 11,
    });
    expect(warnings).toStrictEqual(['aspect ratio 3:1 changed to 21:9, the nearest this model makes', 'not supported by this model, stripped: negative_prompt, quality, style']);
  });

  it('reference images: the content becomes parts, the prompt then each image as a data URI', async () => {
    answer(completion([`data:image/png;base64,${PNG_B64}`]));
    await run(GEMINI, { prompt: 'Put the cat on the moon' }, [pngReference, { mediaType: 'image/jpeg', data: PNG_2 }]).out;
    expect((sent[0]!.json as W.ImageChatRequest).messages).toStrictEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Put the cat on the moon' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_B64}` } },
          { type: 'image_url', image_url: { url: `data:image/jpeg;base64,${PNG_2.toString('base64')}` } },
        ],
      },
    ]);
  });

  it('the first usable data URI is the image: null items skipped, the type read past parameters', async () => {
    answer(completion([null, `data:image/webp;charset=binary;base64,${PNG_2.toString('base64')}`, `data:image/png;base64,${PNG_B64}`]));
    expect(await run(GEMINI).out).toStrictEqual({ image: { data: PNG_2, contentType: 'image/webp' }, usage: null });
  });

  it(
    "the usage keeps what OpenRouter reports beside the totals, as chat answers' usage does: cached prompt tokens (ChatUsage example: cached_tokens 2) and the image's output tokens (completion_tokens_details.image_tokens), priced as image output",
    async () => {
      const usage = {
        completion_tokens: 1300,
        completion_tokens_details: { reasoning_tokens: 5, image_tokens: 1290 },
        cost: 0.0012,
        is_byok: false,
        prompt_tokens: 10,
        prompt_tokens_details: { cached_tokens: 2 },
        total_tokens: 1310,
      };
      answer(completion([`data:image/png;base64,${PNG_B64}`], usage));
      expect((await run(GEMINI).out).usage).toStrictEqual({ inputTokens: 10, outputTokens: 1300, cachedTokens: 2, cacheWriteTokens: 0, reasoningTokens: 5, imageOutputTokens: 1290 });
    },
  );
});

describe('answers without an image', () => {
  it('text only, an image given as an https URL (in.openapi.yaml allows "URL or base64"), or no choice at all: a provider failure naming the finish reason', async () => {
    answer(
      { json: { choices: [{ message: { role: 'assistant', content: 'I cannot make that image.' }, finish_reason: 'stop' }] } },
      completion(['https://example.com/generated.png'], undefined, 'length'),
      { json: { choices: [] } },
    );
    const expected = (why: string) => ({ error: 'UpstreamError', status: 502, code: 'upstream_error', retryable: true, message: `provider 'openrouter': answered without an image (finish_reason ${why})` });
    expect([await failure(run(GEMINI).out), await failure(run(GEMINI).out), await failure(run(GEMINI).out)]).toStrictEqual([expected('stop'), expected('length'), expected('none')]);
  });
});

describe('refusals and failures', () => {
  const policy = (reason: string) => ({
    error: 'GatewayError',
    status: 400,
    type: 'invalid_request_error',
    code: 'content_policy_violation',
    param: 'prompt',
    message: `The upstream provider 'openrouter' refused the request under its content policy: ${reason}`,
  });
  // OpenRouter's moderation refusal: a 403 in the {error: {code, message}} envelope; the message is
  // OpenRouter's documented wording (openrouter.ai/docs errors page, not copied into the repository).
  const FLAGGED = 'google/gemini-2.5-flash-image requires moderation on OpenRouter. Your input was flagged for "violence/graphic".';

  it('a 403 whose message says it was flagged is a content-policy refusal', async () => {
    answer({ status: 403, json: { error: { code: 403, message: FLAGGED, metadata: { reasons: ['violence/graphic'] } } } });
    expect(await failure(run(GEMINI).out)).toStrictEqual(policy(`answered HTTP 403: ${FLAGGED}`));
  });

  it('the same error inside an HTTP 200 body (the OpenRouter AI SDK provider, github.com/OpenRouterTeam/ai-sdk-provider: errors may come with 200) likewise', async () => {
    answer({ json: { error: { code: 403, message: FLAGGED } } });
    expect(await failure(run(GEMINI).out)).toStrictEqual(policy(`reported an error: ${FLAGGED}`));
  });

  it('other failures stay upstream failures: a 4xx that names no moderation, a 429, a 5xx even when it names one', async () => {
    answer(
      { status: 400, json: { error: { code: 400, message: 'Invalid request parameters' } } },
      { status: 429, json: { error: { code: 429, message: 'Rate limit exceeded' } } },
      { status: 502, json: { error: { code: 502, message: 'Provider returned error: moderation service unavailable' } } },
    );
    expect([await failure(run(GEMINI).out), await failure(run(GEMINI).out), await failure(run(GEMINI).out)]).toStrictEqual([
      { error: 'UpstreamError', status: 400, code: 'upstream_rejected', retryable: false, message: "provider 'openrouter': answered HTTP 400: Invalid request parameters" },
      { error: 'UpstreamError', status: 429, code: 'upstream_rate_limited', retryable: true, message: "provider 'openrouter': answered HTTP 429: Rate limit exceeded" },
      { error: 'UpstreamError', status: 502, code: 'upstream_error', retryable: true, message: "provider 'openrouter': answered HTTP 502: Provider returned error: moderation service unavailable" },
    ]);
  });
});
