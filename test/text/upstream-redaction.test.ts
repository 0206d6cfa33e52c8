// An upstream's own error text reaches clients and the log only redacted: the credential it echoes
// (`Incorrect API key provided: sk-…`), its internal URLs, addresses and file paths are replaced,
// while the provider, the status and what went wrong stay readable (issue 30).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { errorBody, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

// What a misconfigured upstream behind a proxy says, secrets and all.
const LEAKY =
  'Incorrect API key provided: sk-proj-SECRETabcdef0123456789XYZ. Internal: http://10.1.2.3:8080/v1 at /srv/app/handlers/chat.js (host llm.svc.cluster.local, peer [fd00::17]:9000, token eyJhbGciOiJIUzI1NiJ9AbCdEf0123456789)';
const REDACTED = 'Incorrect API key provided: [redacted key] Internal: [url] at [path] (host [address], peer [address], token [redacted])';
const SECRETS = ['SECRETabcdef', 'sk-proj', '10.1.2.3', ':8080', '/srv/app', 'chat.js', 'svc.cluster', 'fd00', 'eyJhbGci'];

let upstream: Server;
let gw: TestGateway;
let key: string;
const lines: string[] = [];

beforeAll(async () => {
  // The upstream model name picks the failure: HTTP 401, HTTP 400, or an error inside a 200.
  upstream = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const model = (JSON.parse(raw) as { model: string }).model;
      const error = model === 'in-body' ? { message: LEAKY, type: 'server_error' } : { message: LEAKY, type: 'invalid_request_error', code: 'invalid_api_key' };
      res.writeHead(model === 'http-401' ? 401 : model === 'http-400' ? 400 : 200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error }));
    });
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
  gw = await startTestGateway({
    config: `
providers:
  - { id: openai, type: openai, base_url: "${url}", api_key: test-key }
models:
  - { id: m-401, endpoint: chat, upstreams: [{ provider: openai, model: http-401 }] }
  - { id: m-400, endpoint: chat, upstreams: [{ provider: openai, model: http-400 }] }
  - { id: m-body, endpoint: chat, upstreams: [{ provider: openai, model: in-body }] }
plans:
  - { id: free, rank: 0, daily_tokens: 100000, requests_per_minute: 100, max_concurrent_jobs: 1 }
`,
    logger: pino({ level: 'info' }, { write: (line: string) => void lines.push(line) }),
  });
  key = await gw.newKey();
});
afterAll(async () => {
  await gw?.close();
  await new Promise<void>((r) => upstream?.close(() => r()));
});

const chat = (model: string) => gw.fetch('/v1/chat/completions', { method: 'POST', key, json: { model, messages: [{ role: 'user', content: 'hi' }] } });

it('a 401 naming the key, an internal URL and a path: 502 with the provider, the status and the summary, redacted', async () => {
  const res = await chat('m-401');
  expect(res.status).toBe(502);
  expect(await errorBody(res)).toEqual({
    message: `All upstreams failed for model 'm-401': openai [http-401]: answered HTTP 401: ${REDACTED}.`,
    type: 'provider_error',
    code: 'all_upstreams_failed',
    param: null,
  });
});

it('an upstream 400 passed to the client (upstream_invalid_request) is redacted the same way', async () => {
  const res = await chat('m-400');
  expect(res.status).toBe(400);
  expect(await errorBody(res)).toEqual({
    message: `The upstream provider rejected the request: provider 'openai': answered HTTP 400: ${REDACTED}`,
    type: 'invalid_request_error',
    code: 'upstream_invalid_request',
    param: null,
  });
});

it('an error reported inside a 200 answer is redacted too', async () => {
  const res = await chat('m-body');
  expect(res.status).toBe(502);
  expect((await errorBody(res)).message).toBe(`All upstreams failed for model 'm-body': openai [in-body]: reported an error: ${REDACTED} (2 attempts).`);
});

it('the log names the failures without the secrets, addresses or paths', async () => {
  const log = lines.join('');
  expect(log).toContain(`upstream attempt failed: provider 'openai': answered HTTP 401: ${REDACTED}`);
  for (const secret of SECRETS) expect(log, secret).not.toContain(secret);
});

// The rules alone, as exact strings: what must go, and what an operator needs to keep.
it.each([
  // Model ids, plans and statuses stay, whatever their case.
  ['The model `meta-llama/Meta-Llama-3-8B-Instruct` does not exist', 'The model `meta-llama/Meta-Llama-3-8B-Instruct` does not exist'],
  ['deepseek-ai/DeepSeek-R1-Distill-Qwen-32B is not available for the basic tier', 'deepseek-ai/DeepSeek-R1-Distill-Qwen-32B is not available for the basic tier'],
  ['mistralai/Mixtral-8x7B-Instruct-v0.1 overloaded, status:429', 'mistralai/Mixtral-8x7B-Instruct-v0.1 overloaded, status:429'],
  ['bearer tokens and basic access are not enabled', 'bearer tokens and basic access are not enabled'],
  ['claude-3-7-sonnet-20250219: prompt is too long', 'claude-3-7-sonnet-20250219: prompt is too long'],
  // Credentials go, by their prefix, their place after a scheme or name, or their shape.
  ['invalid x-api-key: sk-ant-api03-AbCdEf', 'invalid x-api-key: [redacted]'],
  ['API key not valid: AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUv', 'API key not valid: [redacted key]'],
  ['Authorization: Bearer abc123DEF456ghi', 'Authorization: Bearer [redacted]'],
  ['Authorization: Basic dXNlcjpwYXNzd29yZA==', 'Authorization: Basic [redacted]'],
  ['session eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U expired', 'session [redacted] expired'],
  ['request 0123456789abcdef0123456789abcdef failed', 'request [redacted] failed'],
])('%s', async (text, expected) => {
  const { redactUpstreamText } = await import('../../server/upstream/errors.ts');
  expect(redactUpstreamText(text)).toBe(expected);
});
