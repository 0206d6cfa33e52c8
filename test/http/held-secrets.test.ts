// Every secret the gateway holds is redacted by value in everything it emits (issue 42): a provider
// key without a vendor prefix, which no pattern recognises, echoed back by the upstream in its
// error, reaches neither the client (a 502, a 400, a stream's error event, a Gemini-format error),
// nor the captured bodies, nor the log; nor does the gateway's own secret or its admin token.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../server/main.ts';
import { heldSecrets } from '../../server/runtime/held-secrets.ts';
import { Browser } from '../helpers/browser.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

// Lower case and digits only, no vendor prefix: the upstream-text patterns let it through.
const PROVIDER_KEY = 'gatewaykeyonlylowercase0123456789';
const POOL_KEY = 'secondpoolkeywithoutprefix9876543';
const GATEWAY_SECRET = 'the-gateway-secret-of-this-test-0123456789';
const ADMIN_TOKEN = 'admin-token-of-the-held-secrets-test-42';
const HELD = [PROVIDER_KEY, POOL_KEY, GATEWAY_SECRET, ADMIN_TOKEN];

let upstream: Server;
let gw: TestGateway;
let key: string;
const lines: string[] = [];
let logger: ReturnType<typeof createLogger>;

beforeAll(async () => {
  // It echoes the credential it was sent, as real providers do for a wrong key.
  upstream = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const sent = String(req.headers.authorization ?? '').replace(/^Bearer /, '');
      const model = (JSON.parse(raw) as { model: string }).model;
      const error = { message: `Incorrect API key provided: ${sent}. You can find your key at the dashboard.`, type: 'invalid_request_error', code: 'invalid_api_key' };
      if (req.url!.endsWith('/responses')) {
        // A native Responses stream that fails: passed through to a Responses client as it came.
        const response = { id: 'resp_1', object: 'response', created_at: 1, status: 'in_progress', model, output: [], error: null };
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(`event: response.created\ndata: ${JSON.stringify({ type: 'response.created', sequence_number: 0, response })}\n\n`);
        res.end(`event: response.failed\ndata: ${JSON.stringify({ type: 'response.failed', sequence_number: 1, response: { ...response, status: 'failed', error: { code: 'server_error', message: error.message } } })}\n\n`);
        return;
      }
      if (model === 'stream-error') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(`data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model, choices: [{ index: 0, delta: { role: 'assistant', content: 'Hel' }, finish_reason: null }] })}\n\n`);
        res.end(`data: ${JSON.stringify({ error })}\n\n`);
        return;
      }
      res.writeHead(model === 'http-401' ? 401 : 400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error }));
    });
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
  const env = { GATEWAY_SECRET, GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN, LOG_LEVEL: 'info' };
  gw = await startTestGateway({
    env,
    config: `
providers:
  - { id: single, type: openai-compatible, base_url: "${url}", api_key: ${PROVIDER_KEY} }
  - { id: pooled, type: openai-compatible, base_url: "${url}", api_keys: [${POOL_KEY}] }
  - { id: native, type: openai, base_url: "${url}", api_key: ${PROVIDER_KEY} }
models:
  - { id: m-401, endpoint: chat, upstreams: [{ provider: single, model: http-401 }] }
  - { id: m-400, endpoint: chat, upstreams: [{ provider: single, model: http-400 }] }
  - { id: m-pool, endpoint: chat, upstreams: [{ provider: pooled, model: http-400 }] }
  - { id: m-stream, endpoint: chat, upstreams: [{ provider: single, model: stream-error }] }
  - { id: m-responses, endpoint: chat, upstreams: [{ provider: native, model: responses-failed }] }
plans:
  - { id: free, rank: 0, daily_tokens: 100000, requests_per_minute: 100, max_concurrent_jobs: 1 }
request_log: { capture_bodies: true }
auth: { local: { allow_signup: true } }
`,
    logger: (logger = createLogger({ ...env, LOG_FORMAT: 'json' }, { write: (line: string) => void lines.push(line) })),
  });
  key = await gw.newKey();
});
afterAll(async () => {
  await gw?.close();
  await new Promise<void>((r) => upstream?.close(() => r()));
});

const chat = (model: string, extra: object = {}) => gw.fetch('/v1/chat/completions', { method: 'POST', key, json: { model, messages: [{ role: 'user', content: 'hi' }], ...extra } });
const leaks = (text: string) => HELD.filter((s) => text.includes(s));

describe('secrets the gateway holds, redacted by value', () => {
  it('are registered at start-up: provider keys (pools too), the gateway secret, the admin token', () => {
    for (const s of HELD) expect(heldSecrets.redact(`x ${s} y`)).toBe('x [redacted] y');
  });

  it('never reach an answer: 502, 400, a stream’s error event, a Gemini-format error', async () => {
    const answers: string[] = [];
    for (const res of [await chat('m-401'), await chat('m-400'), await chat('m-pool'), await chat('m-stream', { stream: true })]) {
      answers.push(`${res.status} ${await res.text()}`);
    }
    const failed = await gw.fetch('/v1/responses', { method: 'POST', key, json: { model: 'm-responses', input: 'hi', stream: true } });
    const failedText = await failed.text();
    expect(failedText).toContain('response.failed');
    expect(failedText).toContain('Incorrect API key provided: [redacted]');
    answers.push(`${failed.status} ${failedText}`);
    const gemini = await gw.fetch('/v1beta/models/m-400:generateContent', { method: 'POST', headers: { 'x-goog-api-key': key }, json: { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] } });
    answers.push(`${gemini.status} ${await gemini.text()}`);
    expect(answers.map((a) => a.slice(0, 3))).toEqual(['502', '400', '400', '200', '200', '400']);
    // The upstream's message is still there, its credential is not.
    for (const a of answers) expect(a).toContain('Incorrect API key provided: [redacted]');
    expect(answers.flatMap(leaks)).toEqual([]);
  });

  it('never reach the captured bodies or the log', async () => {
    await chat('m-400');
    await gw.services.requestLog.flush();
    const records = (await (await gw.fetch('/admin/v1/requests?limit=50', { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).json()) as { data: { bodies: { response_url: string } | null }[] };
    const bodies = await Promise.all(records.data.filter((r) => r.bodies).map(async (r) => (await fetch(r.bodies!.response_url)).text()));
    expect(bodies.length).toBeGreaterThan(0);
    expect(bodies.some((b) => b.includes('Incorrect API key provided'))).toBe(true);
    expect(bodies.flatMap(leaks)).toEqual([]);
    // A line that names a secret outright (a library's error, a config dump) is redacted too.
    logger.info({ err: new Error(`connect failed for ${ADMIN_TOKEN}`) }, `connecting with ${GATEWAY_SECRET}`);
    expect(lines.some((l) => l.includes('connecting with [redacted]'))).toBe(true);
    expect(lines.some((l) => l.includes('upstream attempt failed'))).toBe(true);
    expect(lines.flatMap(leaks)).toEqual([]);
  });
});

describe('credentials in URLs', () => {
  it('a hosted file’s token, by any method or spelling, stays out of the log and the request log; so do keys in parameters the gateway does not take', async () => {
    const token = 'fileTokenPart.1234567890.signatureXYZ_-abc';
    const before = lines.length;
    for (const [method, path] of [['HEAD', `/v1/files/${token}`], ['GET', `/v1/%66iles/${token}`], ['GET', `/v1//files/${token}`]] as const) {
      const res = await fetch(`${gw.url}${path}`, { method });
      await res.arrayBuffer();
    }
    for (const query of ['KEY=mg-querysecret0123456789', 'key[]=mg-querysecret0123456789', 'x=mg-querysecret0123456789']) {
      await (await gw.fetch(`/v1/models?${query}`, { key })).arrayBuffer();
    }
    await gw.services.requestLog.flush();
    const logged = lines.slice(before).join('\n');
    expect(logged).toContain('/v1/files/redacted');
    expect(logged).not.toContain('signatureXYZ');
    expect(logged).not.toContain('querysecret');
    const records = (await (await gw.fetch('/admin/v1/requests?limit=200', { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).json()) as { data: { path: string }[] };
    expect(records.data.filter((r) => r.path.includes('files'))).toEqual([]);
    expect(JSON.stringify(records)).not.toContain('signatureXYZ');
  });
});

describe('captured bodies', () => {
  it('are inference calls only: a new key from the dashboard and an OAuth token request are never captured, even with capture on for everyone', async () => {
    const b = new Browser(gw.url);
    await b.signUp('capture@example.com');
    const created = await b.api('POST', '/v1/keys', { name: 'captured?' });
    expect(created.status).toBe(201);
    const newKey = ((await created.json()) as { key: string }).key;
    const token = await gw.fetch('/v1/oauth/token', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=authorization_code&code=the-code-0123456789&code_verifier=the-verifier-0123456789abcdef&client_id=mgc_x' });
    expect(token.status).toBe(400);
    await gw.services.requestLog.flush();
    const records = (await (await gw.fetch('/admin/v1/requests?limit=200', { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).json()) as { data: { path: string; method: string; bodies: unknown }[] };
    const keyRecord = records.data.find((r) => r.method === 'POST' && r.path === '/v1/keys');
    const tokenRecord = records.data.find((r) => r.path === '/v1/oauth/token');
    expect(keyRecord).toMatchObject({ bodies: null });
    expect(tokenRecord).toMatchObject({ bodies: null });
    expect(JSON.stringify(records)).not.toContain(newKey);
  });
});
