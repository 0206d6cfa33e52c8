// Errors answered before a route is chosen come in the shape the path's clients read (issue 42):
// Google's on the Gemini-format routes (everything under /v1beta, the methods under /v1/models/…:,
// the catalog under /v1 with Google's credential), Anthropic's envelope on the catalog with
// `anthropic-version`, the common body elsewhere. Sent over raw sockets: a malformed
// percent-encoding (400 invalid_url), headers over 16 KiB (431), broken HTTP (400
// malformed_request), a method the path does not take (405); each body checked against what the
// OpenAPI document declares for the operation and status.
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GeminiErrorBody } from '../../contract/gemini.ts';
import { ErrorBody, MessagesErrorBody } from '../../contract/errors.ts';
import { buildOpenApiDocument } from '../../contract/openapi.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { rawRequest } from '../helpers/raw-http.ts';

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(() => gw?.close());

const doc = buildOpenApiDocument();
const ajv = new Ajv2020({ strict: false, validateFormats: false });
ajv.addSchema(doc as never, 'openapi');
const pointer = (...parts: string[]) => parts.map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');

/** Whether `body` is what the document declares for `method path` answering `status`. */
function declared(method: string, path: string, status: number, body: unknown): boolean {
  const validate = ajv.compile({ $ref: `openapi#/${pointer('paths', path, method, 'responses', String(status), 'content', 'application/json', 'schema')}` });
  const ok = validate(body);
  if (!ok) console.log(ajv.errorsText(validate.errors));
  return ok as boolean;
}

const send = (head: string) => rawRequest(gw.url, head, Buffer.alloc(0));
const big = `X-Padding: ${'p'.repeat(17_000)}`;
const GEMINI_METHOD = '/v1beta/models/{model}:{method}';

describe('a malformed percent-encoding: 400 invalid_url', () => {
  it.each([
    ['POST', '/v1beta/models/gemini%zz:generateContent', GEMINI_METHOD],
    ['GET', '/v1beta/models/gemini%zz', '/v1beta/models/{model}'],
    ['POST', '/v1/models/gemini%zz:streamGenerateContent', '/v1/models/{model}:{method}'],
  ])('%s %s: Google’s shape', async (method, url, documented) => {
    const res = await send(`${method} ${url} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 0`);
    expect(res.status).toBe(400);
    const body = JSON.parse(res.body);
    expect(GeminiErrorBody.parse(body)).toEqual({
      error: {
        code: 400,
        status: 'INVALID_ARGUMENT',
        message: 'The URL is not valid: it contains a malformed percent-encoding.',
        details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'invalid_url', domain: 'model-gateway' }],
      },
    });
    expect(declared(method.toLowerCase(), documented, 400, body)).toBe(true);
  });

  it('GET /v1/models/{model} with Google’s credential (the Gemini catalog under v1): Google’s shape', async () => {
    for (const head of ['GET /v1/models/a%zz HTTP/1.1\r\nHost: x\r\nx-goog-api-key: k', 'GET /v1/models/a%zz?key=k HTTP/1.1\r\nHost: x']) {
      const res = await send(head);
      expect(res.status).toBe(400);
      expect(GeminiErrorBody.parse(JSON.parse(res.body)).error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' });
    }
  });

  it('GET /v1/models/{model}: the common body, Anthropic’s envelope with anthropic-version', async () => {
    const plain = JSON.parse((await send('GET /v1/models/a%zz HTTP/1.1\r\nHost: x')).body);
    expect(ErrorBody.strict().parse(plain).error).toMatchObject({ code: 'invalid_url', type: 'invalid_request_error' });
    expect(declared('get', '/v1/models/{model}', 400, plain)).toBe(true);
    const anthropic = JSON.parse((await send('GET /v1/models/a%zz HTTP/1.1\r\nHost: x\r\nanthropic-version: 2023-06-01')).body);
    expect(MessagesErrorBody.strict().parse(anthropic)).toMatchObject({ type: 'error', error: { code: 'invalid_url' } });
    expect(declared('get', '/v1/models/{model}', 400, anthropic)).toBe(true);
  });
});

describe('headers over 16 KiB: 431', () => {
  it.each([
    ['POST', '/v1beta/models/gpt-4o-mini:generateContent', GEMINI_METHOD],
    ['POST', '/v1beta/models/gpt-4o-mini:streamGenerateContent?alt=sse', GEMINI_METHOD],
    ['GET', '/v1beta/models', '/v1beta/models'],
    ['POST', '/v1/models/gpt-4o-mini:countTokens', '/v1/models/{model}:{method}'],
    ['GET', '/v1/models?key=k', '/v1beta/models'],
  ])('%s %s: Google’s shape', async (method, url, documented) => {
    const res = await send(`${method} ${url} HTTP/1.1\r\nHost: x\r\n${big}`);
    expect(res).toMatchObject({ status: 431, closed: true });
    const body = JSON.parse(res.body);
    expect(GeminiErrorBody.parse(body)).toEqual({
      error: {
        code: 431,
        status: 'INVALID_ARGUMENT',
        message: 'The request headers are larger than this server accepts (16 KiB in all).',
        details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'headers_too_large', domain: 'model-gateway' }],
      },
    });
    expect(declared(method.toLowerCase(), documented, 431, body)).toBe(true);
  });

  it('GET /v1/models with x-goog-api-key among the headers: Google’s shape; without it the common body', async () => {
    const google = await send(`GET /v1/models/gpt-4o-mini HTTP/1.1\r\nHost: x\r\nX-Goog-Api-Key: k\r\n${big}`);
    expect(GeminiErrorBody.parse(JSON.parse(google.body)).error.code).toBe(431);
    const plain = await send(`GET /v1/models/gpt-4o-mini HTTP/1.1\r\nHost: x\r\n${big}`);
    expect(ErrorBody.parse(JSON.parse(plain.body)).error.code).toBe('headers_too_large');
    expect(declared('get', '/v1/models/{model}', 431, JSON.parse(plain.body))).toBe(true);
  });
});

describe('malformed HTTP and other methods', () => {
  it('conflicting Content-Length and Transfer-Encoding on a Gemini route: 400 malformed_request in Google’s shape', async () => {
    const res = await send('POST /v1beta/models/gpt-4o-mini:generateContent HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked');
    expect(res).toMatchObject({ status: 400, closed: true });
    const body = JSON.parse(res.body);
    expect(GeminiErrorBody.parse(body).error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT', details: [{ reason: 'malformed_request' }] });
    expect(declared('post', GEMINI_METHOD, 400, body)).toBe(true);
  });

  it('a method a Gemini path does not take: 405 in Google’s shape, with Allow', async () => {
    const res = await fetch(`${gw.url}/v1beta/models/gpt-4o-mini`, { method: 'DELETE' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD, POST');
    expect(GeminiErrorBody.parse(await res.json()).error).toMatchObject({
      code: 405,
      status: 'INVALID_ARGUMENT',
      message: 'DELETE is not allowed on /v1beta/models/gpt-4o-mini: it takes GET, HEAD, POST.',
      details: [{ reason: 'method_not_allowed' }],
    });
  });
});
