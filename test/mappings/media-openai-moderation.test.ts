// server/providers/openai/moderation.ts: the client's moderation body → `POST /moderations`, and
// OpenAI's answer passed on as it is. Answers: the examples of OpenAI's OpenAPI spec
// (github.com/openai/openai-openapi, `openapi.yaml`, the `/moderations` x-oaiMeta examples), copied
// here verbatim; no recorded moderation answer is in the repository.
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { openAiModeration } from '../../server/providers/openai/moderation.ts';
import type * as W from '../../server/providers/openai/wire.ts';
import { adapterCall, answer, failure, provider, reset, sent } from './media-upstream.ts';

vi.mock('../../server/upstream/http.ts', async (importOriginal) => ({ ...(await importOriginal<object>()), ...(await import('./media-upstream.ts')).fakeHttp }));

beforeEach(reset);

/** openapi.yaml, `/moderations`, example "Single string": the response. */
const SINGLE_STRING: W.Moderation = {
  id: 'modr-AB8CjOTu2jiq12hp1AQPfeqFWaORR',
  model: 'text-moderation-007',
  results: [
    {
      flagged: true,
      categories: {
        sexual: false,
        hate: false,
        harassment: true,
        'self-harm': false,
        'sexual/minors': false,
        'hate/threatening': false,
        'violence/graphic': false,
        'self-harm/intent': false,
        'self-harm/instructions': false,
        'harassment/threatening': true,
        violence: true,
      },
      category_scores: {
        sexual: 0.000011726012417057063,
        hate: 0.22706663608551025,
        harassment: 0.5215635299682617,
        'self-harm': 2.227119921371923e-6,
        'sexual/minors': 7.107352217872176e-8,
        'hate/threatening': 0.023547329008579254,
        'violence/graphic': 0.00003391829886822961,
        'self-harm/intent': 1.646940972932498e-6,
        'self-harm/instructions': 1.1198755256458526e-9,
        'harassment/threatening': 0.5694745779037476,
        violence: 0.9971134662628174,
      },
    },
  ],
};

/** openapi.yaml, `/moderations`, example "Image and text": the response (omni-moderation, with applied input types). */
const IMAGE_AND_TEXT: W.Moderation = {
  id: 'modr-0d9740456c391e43c445bf0f010940c7',
  model: 'omni-moderation-latest',
  results: [
    {
      flagged: true,
      categories: {
        harassment: true,
        'harassment/threatening': true,
        sexual: false,
        hate: false,
        'hate/threatening': false,
        illicit: false,
        'illicit/violent': false,
        'self-harm/intent': false,
        'self-harm/instructions': false,
        'self-harm': false,
        'sexual/minors': false,
        violence: true,
        'violence/graphic': true,
      },
      category_scores: {
        harassment: 0.8189693396524255,
        'harassment/threatening': 0.804985420696006,
        sexual: 1.573112165348997e-6,
        hate: 0.007562942636942845,
        'hate/threatening': 0.004208854591835476,
        illicit: 0.030535955153511665,
        'illicit/violent': 0.008925306722380033,
        'self-harm/intent': 0.00023023930975076432,
        'self-harm/instructions': 0.0002293869201073356,
        'self-harm': 0.012598046106750154,
        'sexual/minors': 2.212566909570261e-8,
        violence: 0.9999992735124786,
        'violence/graphic': 0.843064871157054,
      },
      category_applied_input_types: {
        harassment: ['text'],
        'harassment/threatening': ['text'],
        sexual: ['text', 'image'],
        hate: ['text'],
        'hate/threatening': ['text'],
        illicit: ['text'],
        'illicit/violent': ['text'],
        'self-harm/intent': ['text', 'image'],
        'self-harm/instructions': ['text', 'image'],
        'self-harm': ['text', 'image'],
        'sexual/minors': ['text'],
        violence: ['text', 'image'],
        'violence/graphic': ['text', 'image'],
      },
    },
  ],
};

describe('openAiModeration', () => {
  it('POSTs the body to /moderations with the bearer key, the model set to the upstream model; the answer comes back as it is (spec example "Single string")', async () => {
    const { call, warnings } = adapterCall(provider('openai'), 'omni-moderation-latest');
    answer({ json: SINGLE_STRING });
    // The request of the spec's example: a body without a model.
    const out = await openAiModeration.run({ input: 'I want to kill them.' }, call);
    expect(sent).toStrictEqual([
      { method: 'POST', url: 'https://api.openai.com/v1/moderations', headers: { authorization: 'Bearer test-key' }, json: { input: 'I want to kill them.', model: 'omni-moderation-latest' } },
    ]);
    expect(out).toStrictEqual(SINGLE_STRING);
    expect(warnings).toStrictEqual([]);
  });

  it("the client's model alias is replaced by the routed upstream model; image inputs and other fields pass through (spec example \"Image and text\")", async () => {
    const { call } = adapterCall(provider('openai'), 'omni-moderation-2024-09-26');
    answer({ json: IMAGE_AND_TEXT });
    const input = [
      { type: 'text' as const, text: '...text to classify goes here...' },
      { type: 'image_url' as const, image_url: { url: 'https://example.com/image.png' } },
    ];
    const out = await openAiModeration.run({ model: 'omni-moderation-latest', input, user: 'u-1' }, call);
    expect(sent).toStrictEqual([
      { method: 'POST', url: 'https://api.openai.com/v1/moderations', headers: { authorization: 'Bearer test-key' }, json: { model: 'omni-moderation-2024-09-26', input, user: 'u-1' } },
    ]);
    expect(out).toStrictEqual(IMAGE_AND_TEXT);
  });

  it("an OpenAI-compatible server: its base_url and the operator's headers (they win over the key)", async () => {
    const p = provider('openai-compatible', { base_url: 'http://127.0.0.1:8000/v1/', headers: { 'X-Org': 'o-1' } });
    const { call } = adapterCall(p, 'text-moderation-stable');
    answer({ json: SINGLE_STRING });
    await openAiModeration.run({ input: ['a', 'b'] }, call);
    expect(sent).toStrictEqual([
      { method: 'POST', url: 'http://127.0.0.1:8000/v1/moderations', headers: { authorization: 'Bearer test-key', 'X-Org': 'o-1' }, json: { input: ['a', 'b'], model: 'text-moderation-stable' } },
    ]);
  });

  it('an error answer is the upstream failure, unchanged (OpenAI error envelope; a 401 fails over, a 400 does not)', async () => {
    const { call } = adapterCall(provider('openai'), 'omni-moderation-latest');
    // The error envelope of the spec's ErrorResponse (type, message, param, code); the text is ours.
    answer({ status: 401, json: { error: { message: 'Incorrect API key provided.', type: 'invalid_request_error', param: null, code: 'invalid_api_key' } } });
    expect(await failure(openAiModeration.run({ input: 'x' }, call))).toStrictEqual({
      error: 'UpstreamError',
      status: 401,
      code: 'upstream_error',
      retryable: true,
      message: "provider 'openai-test': answered HTTP 401: Incorrect API key provided.",
    });
    answer({ status: 400, json: { error: { message: "Invalid value for 'input'.", type: 'invalid_request_error', param: 'input', code: null } } });
    expect(await failure(openAiModeration.run({ input: 'x' }, call))).toStrictEqual({
      error: 'UpstreamError',
      status: 400,
      code: 'upstream_rejected',
      retryable: false,
      message: "provider 'openai-test': answered HTTP 400: Invalid value for 'input'.",
    });
  });
});
