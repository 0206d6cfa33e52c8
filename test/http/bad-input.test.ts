// Ordinary bad input never becomes a 500: NUL characters, ids that cannot exist, bodies nested
// thousands deep, malformed URLs and oversized paths or headers, each a 4xx in the right body
// with the field named, before the database or an upstream is touched.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH } from '../../contract/common.ts';
import { errorBody } from '../helpers/gateway.ts';
import { startTextGateway } from '../helpers/text-gateway.ts';
import type { TestGateway } from '../helpers/gateway.ts';

let t: Awaited<ReturnType<typeof startTextGateway>>;
let gw: TestGateway;
let key: string;
let admin: string;

beforeAll(async () => {
  t = await startTextGateway();
  gw = t.gw;
  key = t.key;
  admin = gw.services.adminTokens.known!;
});
afterAll(() => t?.close());

const deepText = (levels: number) => '{"a":['.repeat(levels / 2) + '1' + ']}'.repeat(levels / 2);

describe('a NUL character or an impossible id is a 4xx, never a database error', () => {
  it.each([
    ['DELETE', '/v1/apps/%00', 'app_not_found', 'No such app.'],
    ['POST', '/v1/apps/app_x%00/rotate-secret', 'app_not_found', 'No such app.'],
    ['DELETE', '/v1/connected-apps/%00', 'grant_not_found', 'No such connected app.'],
    ['DELETE', '/v1/connected-apps/grt_%00', 'grant_not_found', 'No such connected app.'],
  ])('%s %s', async (method, path, code, message) => {
    const res = await gw.fetch(path, { method, key });
    expect(res.status).toBe(404);
    expect(await errorBody(res)).toEqual({ message, type: 'invalid_request_error', code, param: 'id' });
  });

  it.each([
    ['PATCH', '/admin/v1/users/a%00b', { plan: 'free' }, 'user_not_found', 'user'],
    ['POST', '/admin/v1/keys/%00/revoke', undefined, 'key_not_found', 'id'],
    ['POST', '/admin/v1/keys/key_1%00/revoke', undefined, 'key_not_found', 'id'],
  ])('admin %s %s', async (method, path, json, code, param) => {
    const res = await gw.fetch(path, { method, key: admin, json });
    expect(res.status).toBe(404);
    expect(await errorBody(res)).toMatchObject({ type: 'invalid_request_error', code, param });
  });

  it.each([
    ['/v1/apps', { name: 'a\u0000b', redirect_uris: ['https://x.example/cb'] }, 'name'],
    ['/v1/apps', { name: 'ok', redirect_uris: ['https://x.example/\u0000'] }, 'redirect_uris[0]'],
    ['/v1/apps', { name: 'ok', redirect_uris: ['https://x.example/cb'], description: 'x\u0000' }, 'description'],
  ])('POST %s with a NUL in %s', async (path, json, param) => {
    const res = await gw.fetch(path, { method: 'POST', key, json });
    expect(res.status).toBe(400);
    expect(await errorBody(res)).toEqual({ message: `Invalid '${param}': must not contain NUL characters.`, type: 'invalid_request_error', code: 'invalid_parameter', param });
  });

  it.each([
    ['/admin/v1/users', { email: 'a\u0000@example.com' }, 'email'],
    ['/admin/v1/users', { email: 'b@example.com', name: 'x\u0000' }, 'name'],
    ['/admin/v1/keys', { user: 'x\u0000' }, 'user'],
  ])('admin POST %s with a NUL in %s', async (path, json, param) => {
    const res = await gw.fetch(path, { method: 'POST', key: admin, json });
    expect(res.status).toBe(400);
    expect((await errorBody(res)).param).toBe(param);
  });

  it.each([
    ['token: code', '/v1/oauth/token', 'grant_type=authorization_code&code=a%00&client_id=mgc_x&client_secret=y', "Invalid 'code': must not contain NUL characters."],
    ['token: client_id', '/v1/oauth/token', 'grant_type=refresh_token&refresh_token=r&client_id=x%00', "Invalid 'client_id': must not contain NUL characters."],
    ['token: refresh_token', '/v1/oauth/token', 'grant_type=refresh_token&refresh_token=a%00&client_id=x', "Invalid 'refresh_token': must not contain NUL characters."],
    ['revoke: token', '/v1/oauth/revoke', 'token=a%00', "Invalid 'token': must not contain NUL characters."],
  ])('%s answers the OAuth error body', async (_what, path, body, description) => {
    const res = await fetch(gw.url + path, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });
    expect(res.status).toBe(400);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(await res.json()).toEqual({ error: 'invalid_request', error_description: description });
  });

  it('the authorize endpoint shows its error page for a NUL in client_id, never a redirect or JSON', async () => {
    const res = await fetch(`${gw.url}/v1/oauth/authorize?client_id=a%00&response_type=code`, { redirect: 'manual' });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const page = await res.text();
    expect(page).toContain('<title>Invalid request · Model Gateway</title>');
    expect(page).toContain('Invalid &#39;client_id&#39;: must not contain NUL characters.');
  });
});

describe(`bodies nested deeper than ${MAX_JSON_DEPTH} levels are 400 nesting_too_deep, before any upstream`, () => {
  const tool = (levels: number) => `{"type":"function","function":{"name":"f","parameters":${deepText(levels)}}}`;
  it.each([
    ['chat: a tool schema 3,000 deep', '/v1/chat/completions', `{"model":"openai-text","messages":[{"role":"user","content":"hi"}],"tools":[${tool(3000)}]}`, 'tools'],
    ['chat: an unknown field 10,000 deep', '/v1/chat/completions', `{"model":"openai-text","messages":[{"role":"user","content":"hi"}],"x_extra":${deepText(10_000)}}`, 'x_extra'],
    ['chat: a response_format schema 10,000 deep', '/v1/chat/completions', `{"model":"gemini-text","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_schema","json_schema":{"name":"n","schema":${deepText(10_000)}}}}`, 'response_format'],
    ['Messages: a tool schema 3,000 deep', '/v1/messages', `{"model":"anthropic-text","max_tokens":10,"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"f","input_schema":${deepText(3000)}}]}`, 'tools'],
    ['Responses: a tool schema 3,000 deep', '/v1/responses', `{"model":"openai-text","input":"hi","tools":[{"type":"function","name":"f","parameters":${deepText(3000)}}]}`, 'tools'],
  ])('%s', async (_what, path, body, top) => {
    const recorded = t.fake.requests.length;
    const res = await fetch(gw.url + path, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body });
    expect(res.status).toBe(400);
    const raw = (await res.json()) as any;
    const e = path === '/v1/messages' ? (expect(raw.type).toBe('error'), raw.error) : raw.error;
    expect(e).toMatchObject({ type: 'invalid_request_error', code: 'nesting_too_deep', message: `The request body is nested deeper than ${MAX_JSON_DEPTH} levels (in '${top}').` });
    expect(e.param.startsWith(top)).toBe(true);
    expect(t.fake.requests.length).toBe(recorded);
  });

  it('three of them leave every upstream healthy on /v1/models/status', async () => {
    const body = `{"model":"openai-text","messages":[{"role":"user","content":"hi"}],"x":${deepText(10_000)}}`;
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body });
      expect(res.status).toBe(400);
    }
    const status = (await (await gw.fetch('/v1/models/status?model=openai-text', { key })).json()) as any;
    expect(status.data[0]).toMatchObject({ model: 'openai-text', status: 'unknown', requests: 0, errors: 0, last_error: null });
  });

  it(`exactly ${MAX_JSON_DEPTH} levels still pass validation`, async () => {
    // The root object and messages take 3 levels; the unknown field fills the rest.
    const fill = MAX_JSON_DEPTH - 1;
    const body = `{"model":"openai-text","messages":[{"role":"user","content":"hi"}],"x":${'['.repeat(fill)}${']'.repeat(fill)}}`;
    const res = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body });
    expect(res.status).toBe(200);
  });
});

describe('URL, path and header errors use the part-7 body and never echo the request', () => {
  it('bad percent-encoding is 400 invalid_url', async () => {
    const res = await fetch(`${gw.url}/v1/%zz`);
    expect(res.status).toBe(400);
    expect(await errorBody(res)).toEqual({ message: 'The URL is not valid: it contains a malformed percent-encoding.', type: 'invalid_request_error', code: 'invalid_url', param: null });
  });

  it('a path parameter over 100 characters is 414 without the URL in the answer', async () => {
    const id = `job_${'a'.repeat(150)}`;
    const res = await gw.fetch(`/v1/images/generations/${id}`, { key });
    expect(res.status).toBe(414);
    const text = await res.text();
    expect(text).not.toContain('aaaaaaaaaa');
    expect(JSON.parse(text).error).toMatchObject({ type: 'invalid_request_error', code: 'uri_too_long', param: null });
  });

  it('an unknown route names a short path and omits a long one', async () => {
    expect((await errorBody(await fetch(`${gw.url}/v1/nope`))).message).toBe('Unknown route: GET /v1/nope.');
    const long = await errorBody(await fetch(`${gw.url}/v1/${'x'.repeat(300)}/y`));
    expect(long).toEqual({ message: 'Unknown route.', type: 'invalid_request_error', code: 'not_found', param: null });
  });

  it('headers over 16 KiB are 431 in the part-7 body', async () => {
    const res = await fetch(`${gw.url}/v1/models`, { headers: { 'x-padding': 'p'.repeat(20_000) } });
    expect(res.status).toBe(431);
    expect(await errorBody(res)).toMatchObject({ type: 'invalid_request_error', code: 'headers_too_large', param: null });
  });

  it('conflicting Content-Length and Transfer-Encoding is 400 malformed_request and the connection closes', async () => {
    const { port } = new URL(gw.url);
    const out = await new Promise<string>((resolve) => {
      const s = net.connect(Number(port), '127.0.0.1', () => s.write('POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'));
      let data = '';
      s.on('data', (d) => (data += d));
      s.on('close', () => resolve(data));
    });
    expect(out).toMatch(/^HTTP\/1.1 400 Bad Request\r\n/);
    expect(out).toContain('\r\nConnection: close\r\n');
    expect(JSON.parse(out.slice(out.indexOf('\r\n\r\n') + 4)).error.code).toBe('malformed_request');
  });

  it('a text/plain body on a JSON route is 415', async () => {
    const res = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'text/plain' }, body: 'hello' });
    expect(res.status).toBe(415);
    expect(await errorBody(res)).toMatchObject({ code: 'unsupported_media_type' });
  });

  it('a usage query with an impossible end date is 400 naming it', async () => {
    const res = await gw.fetch('/v1/usage?end=4831-49-27', { key });
    expect(res.status).toBe(400);
    expect(await errorBody(res)).toEqual({ message: "'end' is not a calendar date.", type: 'invalid_request_error', code: 'invalid_parameter', param: 'end' });
  });

  it('a model id over 256 characters is 400 naming model', async () => {
    const res = await gw.fetch('/v1/chat/completions', { method: 'POST', key, json: { model: 'm'.repeat(300), messages: [{ role: 'user', content: 'hi' }] } });
    expect(res.status).toBe(400);
    expect((await errorBody(res)).param).toBe('model');
  });
});
