// GET /v1/models/{model} and the catalog in Anthropic's shape (issue 42), through the official SDKs:
// `openai`'s models.retrieve gets the catalog entry, `@anthropic-ai/sdk`'s models.list (paged) and
// models.retrieve get Anthropic's ModelInfo (the text models), ids with slashes and colons included;
// an unknown id is 404 model_not_found in each client's error shape. Google's clients keep the
// Gemini-shaped catalog under /v1, and GET /v1/models/status stays the health history.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorBody, MessagesErrorBody } from '../../contract/errors.ts';
import { AnthropicModelInfo, AnthropicModelList, CatalogEntry } from '../../contract/models.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const TEXT = ['gpt-4o-mini', 'openrouter/openai/gpt-4o', 'claude-sonnet-4-5', 'meta/llama-3.3:free', 'text-5', 'text-6', 'text-7'];

const config = `
providers:
  - { id: openai, type: openai, api_key: k }
  - { id: claude, type: anthropic, api_key: k }
models:
  - { id: gpt-4o-mini, endpoint: chat, upstreams: [{ provider: openai, model: gpt-4o-mini }] }
  - { id: gpt-image-1, endpoint: images, upstreams: [{ provider: openai, model: gpt-image-1 }] }
  - { id: openrouter/openai/gpt-4o, endpoint: chat, upstreams: [{ provider: openai, model: gpt-4o }] }
  - id: claude-sonnet-4-5
    endpoint: messages
    upstreams: [{ provider: claude, model: claude-sonnet-4-5 }]
    context_window: 200000
    max_output_tokens: 64000
  - { id: "meta/llama-3.3:free", endpoint: responses, upstreams: [{ provider: openai, model: llama }] }
  - { id: text-5, endpoint: chat, upstreams: [{ provider: openai, model: t5 }] }
  - { id: text-6, endpoint: chat, upstreams: [{ provider: openai, model: t6 }] }
  - { id: text-7, endpoint: generate_content, upstreams: [{ provider: openai, model: t7 }] }
`;

let gw: TestGateway;
let oa: OpenAI;
let an: Anthropic;
beforeAll(async () => {
  gw = await startTestGateway({ config });
  // No credential is needed: the catalog is public, whatever key the SDKs send.
  oa = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  an = new Anthropic({ baseURL: gw.url, apiKey: 'unused', maxRetries: 0 });
});
afterAll(() => gw?.close());

describe('the openai SDK', () => {
  it.each(['gpt-4o-mini', 'openrouter/openai/gpt-4o', 'meta/llama-3.3:free', 'gpt-image-1'])('models.retrieve(%j): the catalog entry, every field', async (id) => {
    const m = await oa.models.retrieve(id);
    expect(m).toMatchObject({ id, object: 'model', owned_by: 'openai' });
    expect(typeof m.created).toBe('number');
    expect(Object.keys(m).sort()).toEqual(Object.keys(CatalogEntry.shape).sort());
    const listed = (await (await gw.fetch('/v1/models')).json()) as { data: CatalogEntry[] };
    expect(m).toEqual(listed.data.find((e) => e.id === id));
  });

  it('an id with its slashes sent as they are works as well', async () => {
    const res = await gw.fetch('/v1/models/openrouter/openai/gpt-4o');
    expect(res.status).toBe(200);
    expect(((await res.json()) as CatalogEntry).id).toBe('openrouter/openai/gpt-4o');
  });

  it('models.list: every model, in the gateway’s own shape', async () => {
    const ids: string[] = [];
    for await (const m of oa.models.list()) ids.push(m.id);
    expect(ids).toEqual(['gpt-4o-mini', 'gpt-image-1', ...TEXT.slice(1)]);
  });

  it('an unknown id is 404 model_not_found, param model, with the id meant', async () => {
    const err = await oa.models.retrieve('gpt-4o-mni').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect(err).toMatchObject({
      status: 404,
      code: 'model_not_found',
      param: 'model',
      type: 'invalid_request_error',
      error: { message: "The model 'gpt-4o-mni' does not exist or is not served by this gateway. Did you mean 'gpt-4o-mini'? GET /v1/models lists the models it serves." },
    });
    const res = await gw.fetch('/v1/models/no-such-model');
    expect(res.status).toBe(404);
    const body = await res.json();
    expect(ErrorBody.strict().parse(body).error).toMatchObject({ code: 'model_not_found', param: 'model' });
  });

  it('models.delete is 405, naming what the path takes', async () => {
    const err = await oa.models.delete('gpt-4o-mini').catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 405, code: 'method_not_allowed', error: { message: 'DELETE is not allowed on /v1/models/gpt-4o-mini: it takes GET, HEAD, POST.' } });
  });
});

describe('the @anthropic-ai/sdk', () => {
  it('models.retrieve: Anthropic’s ModelInfo, the limits from the catalog', async () => {
    const m = await an.models.retrieve('claude-sonnet-4-5');
    expect(AnthropicModelInfo.strict().parse(m)).toEqual({
      type: 'model',
      id: 'claude-sonnet-4-5',
      display_name: 'claude-sonnet-4-5',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
      max_input_tokens: 200000,
      max_tokens: 64000,
      lifecycle: 'active',
      deprecated_at: null,
      retires_at: null,
      line: null,
      capabilities: null,
    });
    const entry = (await oa.models.retrieve('claude-sonnet-4-5')) as unknown as CatalogEntry;
    expect(Date.parse(m.created_at) / 1000).toBe(entry.created);
    expect(await an.models.retrieve('openrouter/openai/gpt-4o')).toMatchObject({ id: 'openrouter/openai/gpt-4o', max_input_tokens: null, max_tokens: null });
    expect(await an.models.retrieve('meta/llama-3.3:free')).toMatchObject({ id: 'meta/llama-3.3:free' });
  });

  it('models.list: the text models, 20 to a page by default, in catalog order', async () => {
    const page = await an.models.list();
    expect(AnthropicModelList.strict().parse({ data: page.data, has_more: page.has_more, first_id: page.first_id, last_id: page.last_id })).toBeTruthy();
    expect(page.data.map((m) => m.id)).toEqual(TEXT);
    expect(page).toMatchObject({ has_more: false, first_id: TEXT[0], last_id: TEXT[6] });
  });

  it('models.list pages forward with limit and after_id, as the SDK iterates', async () => {
    const ids: string[] = [];
    for await (const m of an.models.list({ limit: 3 })) ids.push(m.id);
    expect(ids).toEqual(TEXT);
    const pages: { ids: string[]; has_more: boolean }[] = [];
    for await (const p of (await an.models.list({ limit: 3 })).iterPages()) pages.push({ ids: p.data.map((m) => m.id), has_more: p.has_more });
    expect(pages).toEqual([
      { ids: TEXT.slice(0, 3), has_more: true },
      { ids: TEXT.slice(3, 6), has_more: true },
      { ids: TEXT.slice(6), has_more: false },
    ]);
    const middle = await an.models.list({ limit: 2, after_id: 'openrouter/openai/gpt-4o' });
    expect(middle).toMatchObject({ first_id: 'claude-sonnet-4-5', last_id: 'meta/llama-3.3:free', has_more: true });
  });

  it('models.list pages backward with before_id', async () => {
    const page = await an.models.list({ limit: 2, before_id: 'text-5' });
    expect(page.data.map((m) => m.id)).toEqual(['claude-sonnet-4-5', 'meta/llama-3.3:free']);
    expect(page).toMatchObject({ has_more: true, first_id: 'claude-sonnet-4-5' });
    const ids: string[] = [];
    for await (const p of page.iterPages()) ids.unshift(...p.data.map((m) => m.id));
    expect(ids).toEqual(TEXT.slice(0, 4));
    const first = await an.models.list({ limit: 5, before_id: 'openrouter/openai/gpt-4o' });
    expect(first).toMatchObject({ has_more: false, first_id: 'gpt-4o-mini', last_id: 'gpt-4o-mini' });
    const none = await an.models.list({ before_id: 'gpt-4o-mini' });
    expect(none).toMatchObject({ data: [], has_more: false, first_id: null, last_id: null });
  });

  it('models.list by lifecycle: every model is active', async () => {
    expect((await an.models.list({ lifecycle: ['active', 'deprecated'] })).data).toHaveLength(TEXT.length);
    expect(await an.models.list({ lifecycle: ['retired'] })).toMatchObject({ data: [], has_more: false, first_id: null, last_id: null });
    const res = await gw.fetch('/v1/models?lifecycle=deprecated', { headers: { 'anthropic-version': '2023-06-01' } });
    expect(((await res.json()) as { data: unknown[] }).data).toEqual([]);
  });

  it('a model that is not a text model is not in Anthropic’s catalog', async () => {
    const err = await an.models.retrieve('gpt-image-1').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.NotFoundError);
    expect((err as InstanceType<typeof Anthropic.NotFoundError>).error).toMatchObject({ type: 'error', error: { code: 'model_not_found', param: 'model' } });
  });

  it('an unknown id is 404 model_not_found in Anthropic’s envelope', async () => {
    const err = await an.models.retrieve('claude-sonet-4-5').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.NotFoundError);
    const body = MessagesErrorBody.strict().parse((err as InstanceType<typeof Anthropic.NotFoundError>).error);
    expect(body).toEqual({
      type: 'error',
      error: {
        type: 'invalid_request_error',
        code: 'model_not_found',
        param: 'model',
        message: "The model 'claude-sonet-4-5' does not exist or is not served by this gateway. Did you mean 'claude-sonnet-4-5'? GET /v1/models lists the models it serves.",
      },
    });
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=1001', 'limit'],
    ['after_id=nope', 'after_id'],
    ['after_id=text-5&before_id=text-6', 'before_id'],
    ['lifecycle=gone', 'lifecycle'],
  ])('bad paging (%s) is 400 naming the parameter, in Anthropic’s envelope', async (query, param) => {
    const res = await gw.fetch(`/v1/models?${query}`, { headers: { 'anthropic-version': '2023-06-01' } });
    expect(res.status).toBe(400);
    expect(MessagesErrorBody.parse(await res.json())).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', param } });
  });
});

describe('what the same paths keep doing', () => {
  it('without anthropic-version, an unknown id’s 404 has no Anthropic envelope', async () => {
    const body = (await (await gw.fetch('/v1/models/nope')).json()) as Record<string, unknown>;
    expect(body.type).toBeUndefined();
  });

  it('Google’s credential still gets the Gemini-shaped catalog under /v1', async () => {
    const res = await gw.fetch('/v1/models/gpt-4o-mini', { headers: { 'x-goog-api-key': 'unused' } });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ name: 'models/gpt-4o-mini', baseModelId: 'gpt-4o-mini' });
    const list = (await (await gw.fetch('/v1/models?key=unused')).json()) as { models: unknown[] };
    expect(list.models).toHaveLength(TEXT.length);
  });

  it('GET /v1/models/status is the health history', async () => {
    const res = await gw.fetch('/v1/models/status?window=1h');
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ object: 'list', window: expect.any(Object) });
  });

  it('POST /v1/models/{model}:generateContent is still Gemini’s method (Google’s error shape without a key)', async () => {
    const res = await gw.fetch('/v1/models/gpt-4o-mini:generateContent', { method: 'POST', json: { contents: [{ parts: [{ text: 'hi' }] }] } });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ error: { code: 401, status: 'UNAUTHENTICATED' } });
  });
});
