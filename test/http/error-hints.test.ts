// Errors that say what to do: an unknown model points to GET /v1/models and the id meant, a body
// over the limit states it, an Authorization header without `Bearer` says so (never echoing the
// key), malformed JSON gives its position once, a known path with the wrong method is 405 with
// Allow, and a missing admin token says where the token is. Through the official SDKs where a
// client would meet them, over plain HTTP for what an SDK cannot send.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorBody, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

let gw: TestGateway;
let key: string;
let oa: OpenAI;
beforeAll(async () => {
  gw = await startTestGateway();
  key = await gw.newKey();
  oa = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
});
afterAll(() => gw?.close());

const chatError = (body: object) =>
  oa.chat.completions.create({ messages: [{ role: 'user', content: 'hi' }], ...body } as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming).then(
    () => {
      throw new Error('expected an error');
    },
    (e: unknown) => e as InstanceType<typeof OpenAI.APIError>,
  );
const post = (path: string, body: string, headers: Record<string, string> = {}) =>
  fetch(gw.url + path, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, ...headers }, body });

describe('model_not_found', () => {
  it.each([
    ['gpt-4o-mni', 'gpt-4o-mini'],
    ['GPT-4o-Mini', 'gpt-4o-mini'],
    ['openai/gpt-4o-mini', 'gpt-4o-mini'],
  ])('%s: suggests %s and points to GET /v1/models', async (model, meant) => {
    const err = await chatError({ model });
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err).toMatchObject({
      status: 400,
      code: 'model_not_found',
      type: 'invalid_request_error',
      param: 'model',
      error: { message: `The model '${model}' does not exist or is not served by this gateway. Did you mean '${meant}'? GET /v1/models lists the models it serves.` },
    });
  });

  it('nothing close: no guess', async () => {
    for (const model of ['claude-opus-4-7', 'o3']) {
      const err = await chatError({ model });
      expect(err.error).toMatchObject({ message: `The model '${model}' does not exist or is not served by this gateway: GET /v1/models lists the models it serves.` });
    }
  });

  it('also on /v1/messages, through the Anthropic SDK, and on /v1/models/status', async () => {
    const an = new Anthropic({ baseURL: gw.url, apiKey: key, maxRetries: 0 });
    const err = await an.messages.create({ model: 'gpt-4o-mini-x', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect(err).toMatchObject({ status: 400, apiMessage: "The model 'gpt-4o-mini-x' does not exist or is not served by this gateway. Did you mean 'gpt-4o-mini'? GET /v1/models lists the models it serves." });
    const status = await fetch(`${gw.url}/v1/models/status?model=gpt4o-mini`);
    expect((await errorBody(status)).message).toBe("The model 'gpt4o-mini' does not exist or is not served by this gateway. Did you mean 'gpt-4o-mini'? GET /v1/models lists the models it serves.");
  });
});

it('a JSON body over the limit states the limit', async () => {
  const err = await chatError({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x'.repeat(21 * 1024 * 1024) }] });
  expect(err).toBeInstanceOf(OpenAI.APIError);
  expect(err).toMatchObject({
    status: 413,
    code: 'payload_too_large',
    type: 'invalid_request_error',
    error: { message: 'The request body is larger than 20 MiB, the most this endpoint accepts: send large images and files by URL rather than inline.' },
  });
});

describe('an Authorization header that is not `Bearer <key>` says how to write it, never echoing it', () => {
  it.each([
    [() => key, 'The Authorization header has no "Bearer " before the API_KEY: send `Authorization: Bearer <API_KEY>`.'],
    [() => 'Bearer', 'The Authorization header has nothing after "Bearer": send `Authorization: Bearer <API_KEY>`.'],
    [() => `Bearer ${key} extra`, 'The Authorization header has more than one word after "Bearer": send `Authorization: Bearer <API_KEY>`, the API_KEY without spaces.'],
    [() => `Basic ${Buffer.from(`me:${key}`).toString('base64')}`, 'The Authorization header must use the Bearer scheme: send `Authorization: Bearer <API_KEY>`.'],
  ])('%#', async (header, message) => {
    const res = await post('/v1/chat/completions', JSON.stringify({ model: 'gpt-4o-mini', messages: [] }), { authorization: header() });
    expect(res.status).toBe(401);
    const body = await errorBody(res);
    expect(body).toEqual({ message, type: 'authentication_error', code: 'invalid_api_key', param: null });
    expect(body.message).not.toContain(key.slice(3, 12));
  });

  it('the admin API says where its token is', async () => {
    const missing = await fetch(`${gw.url}/admin/v1/users`);
    expect(await errorBody(missing)).toEqual({
      message: "Missing admin token: send `Authorization: Bearer <admin token>`; the gateway's admin token is in its DATA_DIR/admin-token (with PostgreSQL, that of the instance that created it), or is its GATEWAY_ADMIN_TOKEN when it was started with one.",
      type: 'authentication_error',
      code: 'invalid_admin_token',
      param: null,
    });
    const bare = await fetch(`${gw.url}/admin/v1/users`, { headers: { authorization: gw.services.adminTokens.known! } });
    expect((await errorBody(bare)).message).toBe(
      'The Authorization header has no "Bearer " before the admin token: send `Authorization: Bearer <admin token>`; the gateway\'s admin token is in its DATA_DIR/admin-token (with PostgreSQL, that of the instance that created it), or is its GATEWAY_ADMIN_TOKEN when it was started with one.',
    );
    const wrong = await fetch(`${gw.url}/admin/v1/users`, { headers: { authorization: 'Bearer mga-wrong' } });
    expect((await errorBody(wrong)).message).toBe("Invalid admin token: the gateway's admin token is in its DATA_DIR/admin-token (with PostgreSQL, that of the instance that created it), or is its GATEWAY_ADMIN_TOKEN when it was started with one.");
  });
});

describe('malformed JSON: where, once, without echoing the body', () => {
  it.each([
    ['{"model": "gpt-4o-mini", "api_key": "sk-secret",}', "expected a property name (no comma before '}'), found '}' at line 1, column 49"],
    ['{\n  "model": "gpt-4o-mini",\n  "temperature": tru\n}', "expected a value, found 't' at line 3, column 18"],
    ['{"model": "gpt-4o-mini"', "expected ',' or '}' after a property value, found the end of the body at line 1, column 24"],
    ['{"model": "gpt-4o-mini"} x', "expected the end of the body after the top-level value, found 'x' at line 1, column 26"],
  ])('%j', async (text, where) => {
    const res = await post('/v1/chat/completions', text);
    expect(res.status).toBe(400);
    const body = await errorBody(res);
    expect(body).toEqual({ message: `The request body is not valid JSON: ${where}.`, type: 'invalid_request_error', code: 'invalid_json', param: null });
    expect(body.message.match(/line \d+, column \d+|position/g)).toHaveLength(1);
    expect(body.message).not.toContain('sk-secret');
  });
});

describe('a known path with another method is 405 with Allow', () => {
  it.each([
    ['GET', '/v1/chat/completions', 'POST'],
    ['DELETE', '/v1/models', 'GET, HEAD'],
    ['PUT', '/v1/keys', 'GET, HEAD, POST'],
    ['POST', '/v1/apps/app_abc', 'DELETE'],
    ['PATCH', '/admin/v1/users/u@example.com/password', 'POST'],
  ])('%s %s', async (method, path, allow) => {
    const res = await fetch(gw.url + path, { method, headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe(allow);
    expect(await errorBody(res)).toEqual({ message: `${method} is not allowed on ${path}: it takes ${allow}.`, type: 'invalid_request_error', code: 'method_not_allowed', param: null });
  });

  it('through the openai SDK', async () => {
    const err = await oa.post('/models', { body: {} }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(err).toMatchObject({ status: 405, code: 'method_not_allowed', error: { message: 'POST is not allowed on /v1/models: it takes GET, HEAD.' } });
  });

  it('an unknown path stays 404', async () => {
    const res = await fetch(`${gw.url}/v1/chat/completion`, { method: 'POST' });
    expect(res.status).toBe(404);
    expect((await errorBody(res)).code).toBe('not_found');
  });
});
