// Every error status this release can produce leaves in the part-7 body, through real HTTP.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorBody, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

let gw: TestGateway;
let key: string;

beforeAll(async () => {
  gw = await startTestGateway();
  key = await gw.newKey();
});
afterAll(() => gw?.close());

const chat = (body: unknown, k = key) => gw.fetch('/v1/chat/completions', { method: 'POST', json: body, key: k });
const valid = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };

describe('400 invalid_request_error', () => {
  it('names the missing field', async () => {
    const res = await chat({ messages: [{ role: 'user', content: 'hi' }] });
    expect(res.status).toBe(400);
    expect(await errorBody(res)).toEqual({
      message: "Missing required parameter: 'model'.",
      type: 'invalid_request_error',
      code: 'missing_required_parameter',
      param: 'model',
    });
  });

  it.each([
    ['temperature above 2 on chat', { ...valid, temperature: 2.5 }, 'temperature'],
    ['top_p above 1', { ...valid, top_p: 1.5 }, 'top_p'],
    ['frequency_penalty below -2', { ...valid, frequency_penalty: -3 }, 'frequency_penalty'],
    ['an unknown reasoning_effort', { ...valid, reasoning_effort: 'extreme' }, 'reasoning_effort'],
    ['an unknown role', { ...valid, messages: [{ role: 'robot', content: 'x' }] }, 'messages[0].role'],
    ['a non-HTTPS image URL', { ...valid, messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'ftp://x/y.png' } }] }] }, 'messages[0].content[0].image_url.url'],
    ['a tool without a name', { ...valid, tools: [{ type: 'function', function: {} }] }, 'tools[0].function.name'],
    ['more than 4 stop sequences', { ...valid, stop: ['a', 'b', 'c', 'd', 'e'] }, 'stop'],
  ])('rejects %s', async (_what, body, param) => {
    const res = await chat(body);
    expect(res.status).toBe(400);
    const e = await errorBody(res);
    expect(e.type).toBe('invalid_request_error');
    expect(e.param).toBe(param);
    expect(e.message).toContain(param);
  });

  it('rejects temperature above 1 on Messages, which allows 0-1', async () => {
    const res = await gw.fetch('/v1/messages', {
      method: 'POST',
      headers: { 'x-api-key': key },
      json: { model: 'gpt-4o-mini', max_tokens: 10, temperature: 1.5, messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(res.status).toBe(400);
    expect((await errorBody(res)).param).toBe('temperature');
  });

  it('requires max_tokens on Messages', async () => {
    const res = await gw.fetch('/v1/messages', { method: 'POST', key, json: { model: 'm', messages: [{ role: 'user', content: 'hi' }] } });
    expect(await errorBody(res)).toMatchObject({ code: 'missing_required_parameter', param: 'max_tokens' });
  });

  it('caps image_url at 5 entries', async () => {
    const url = 'https://example.com/a.png';
    const res = await gw.fetch('/v1/images/generations', { method: 'POST', key, json: { model: 'm', prompt: 'p', image_url: Array(6).fill(url) } });
    expect(res.status).toBe(400);
    expect((await errorBody(res)).param).toBe('image_url');
  });

  it('caps pronunciation rules at 100 and string_to_replace at 200 characters', async () => {
    const rule = { string_to_replace: 'tomato', type: 'alias', alias: 'tomahto' };
    const speech = (extra: object) =>
      gw.fetch('/v1/audio/speech', { method: 'POST', key, json: { model: 'tts-1', input: 'hello', voice: 'alloy', ...extra } });
    let res = await speech({ pronunciation_dictionary: Array(101).fill(rule) });
    expect(res.status).toBe(400);
    expect((await errorBody(res)).param).toBe('pronunciation_dictionary');
    res = await speech({ pronunciation_dictionary: [{ ...rule, string_to_replace: 'x'.repeat(201) }] });
    expect((await errorBody(res)).param).toBe('pronunciation_dictionary[0].string_to_replace');
    res = await speech({ pronunciation_dictionary: [{ string_to_replace: 'x', type: 'phoneme', alphabet: 'ipa' }] });
    expect((await errorBody(res)).param).toBe('pronunciation_dictionary[0].phoneme');
  });

  it('accepts ph as an alias of phoneme and the base64 response_format aliases (then the model is looked up)', async () => {
    let res = await gw.fetch('/v1/audio/speech', {
      method: 'POST',
      key,
      json: { model: 'eleven_flash_v2', input: 'tomato', voice: 'aria', pronunciation_dictionary: [{ string_to_replace: 'tomato', type: 'phoneme', ph: 'təˈmeɪtoʊ', alphabet: 'ipa' }] },
    });
    expect(res.status).toBe(400);
    expect(await errorBody(res)).toMatchObject({ code: 'model_not_found', param: 'model' });
    for (const response_format of ['base64', 'base64_json', 'b64_json', 'url']) {
      res = await gw.fetch('/v1/images/generations', { method: 'POST', key, json: { model: 'm', prompt: 'p', response_format } });
      expect(res.status).toBe(400);
      expect(await errorBody(res)).toMatchObject({ code: 'model_not_found', param: 'model' });
    }
  });

  it('accepts unknown extra fields (they are passed on), then looks the model up', async () => {
    const res = await chat({ ...valid, model: 'no-such-model', some_vendor_field: { x: 1 }, n: 1, metadata: { a: 'b' } });
    expect(res.status).toBe(400);
    expect(await errorBody(res)).toMatchObject({ code: 'model_not_found', param: 'model' });
  });

  it('answers malformed JSON with invalid_json', async () => {
    const res = await gw.fetch('/v1/chat/completions', { method: 'POST', key, headers: { 'content-type': 'application/json' }, body: '{"model":' });
    expect(res.status).toBe(400);
    expect(await errorBody(res)).toMatchObject({ type: 'invalid_request_error', code: 'invalid_json' });
  });

  it('answers a JSON array body as invalid_json', async () => {
    const res = await chat([1, 2]);
    expect(await errorBody(res)).toMatchObject({ code: 'invalid_json', param: null });
  });
});

describe('401 authentication_error', () => {
  it('without a key', async () => {
    const res = await gw.fetch('/v1/chat/completions', { method: 'POST', json: valid });
    expect(res.status).toBe(401);
    expect(await errorBody(res)).toMatchObject({ type: 'authentication_error', code: 'invalid_api_key' });
  });

  it('with an unknown key, before validating the body', async () => {
    const res = await chat({}, 'mg-notarealkey');
    expect(res.status).toBe(401);
    expect(await errorBody(res)).toMatchObject({ type: 'authentication_error', code: 'invalid_api_key', message: 'Invalid API key.' });
  });

  it('takes x-api-key on /v1/messages but not on chat completions', async () => {
    // Authenticated requests get as far as the model lookup.
    const body = { model: 'no-such-model', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] };
    expect((await gw.fetch('/v1/messages', { method: 'POST', headers: { 'x-api-key': key }, json: body })).status).toBe(400);
    expect((await gw.fetch('/v1/messages', { method: 'POST', key, json: body })).status).toBe(400);
    expect((await gw.fetch('/v1/messages', { method: 'POST', headers: { 'x-api-key': 'mg-wrong' }, json: body })).status).toBe(401);
    expect((await gw.fetch('/v1/chat/completions', { method: 'POST', headers: { 'x-api-key': key }, json: valid })).status).toBe(401);
  });

  it('protects the admin API with the admin token', async () => {
    const res = await gw.fetch('/admin/v1/users', { key });
    expect(res.status).toBe(401);
    expect((await errorBody(res)).type).toBe('authentication_error');
  });
});

describe('401, 404, 413, 415, 500', () => {
  it('unknown routes', async () => {
    const res = await gw.fetch('/v1/nothing-here?x=1');
    expect(res.status).toBe(404);
    expect(await errorBody(res)).toEqual({ message: 'Unknown route: GET /v1/nothing-here.', type: 'invalid_request_error', code: 'not_found', param: null });
  });

  it('a malformed job id is job_not_found', async () => {
    const res = await gw.fetch('/v1/images/generations/not-a-job', { key });
    expect(res.status).toBe(404);
    expect(await errorBody(res)).toMatchObject({ code: 'job_not_found' });
  });

  it('a body over the limit is 413 payload_too_large', async () => {
    const big = 'x'.repeat(21 * 1024 * 1024);
    const res = await chat({ ...valid, messages: [{ role: 'user', content: big }] });
    expect(res.status).toBe(413);
    expect(await errorBody(res)).toMatchObject({ type: 'invalid_request_error', code: 'payload_too_large' });
  });

  it('an unsupported content type is 415', async () => {
    const res = await gw.fetch('/v1/chat/completions', { method: 'POST', key, headers: { 'content-type': 'text/csv' }, body: 'a,b' });
    expect(res.status).toBe(415);
    expect(await errorBody(res)).toMatchObject({ type: 'invalid_request_error', code: 'unsupported_media_type' });
  });

  it('an upload is authenticated before a byte of it is read: 401 without a key', async () => {
    const form = new FormData();
    form.set('model', 'whisper-1');
    form.set('file', new Blob([new Uint8Array(10)]), 'a.wav');
    expect((await gw.fetch('/v1/audio/transcriptions', { method: 'POST', body: form })).status).toBe(401);
  });

  it('an internal failure is a 500 without a stack trace', async () => {
    const broken = await startTestGateway();
    try {
      await broken.services.db.close();
      const res = await broken.fetch('/admin/v1/users', { key: broken.services.adminTokens.known! });
      expect(res.status).toBe(500);
      const text = await res.text();
      expect(JSON.parse(text)).toMatchObject({ error: { type: 'server_error', code: 'internal_error' } });
      expect(text).not.toMatch(/\bat .*\.ts:\d+|node_modules|Error:/);
    } finally {
      await broken.close().catch(() => {});
    }
  });
});

it('every response carries a request id', async () => {
  const res = await gw.fetch('/healthz');
  expect(res.headers.get('x-request-id')).toMatch(/^req_/);
});
