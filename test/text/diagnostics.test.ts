// What an operator reads when upstreams fail: one warn line per failed attempt (provider, upstream
// model, failure class, duration; never a credential), a 502 that names every upstream's failure,
// one log line per request, and a JSON body sent as a form answered by its media type.
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startFakeUpstreams, type FakeUpstreams } from '../helpers/fake-upstreams.ts';
import { errorBody, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

let fake: FakeUpstreams;
let gw: TestGateway;
let key: string;
const lines: any[] = [];

beforeAll(async () => {
  fake = await startFakeUpstreams();
  const sink = new Writable({
    write(chunk, _enc, cb) {
      for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l));
      cb();
    },
  });
  gw = await startTestGateway({
    logger: pino({ level: 'info' }, sink),
    config: `
providers:
  - { id: openai, type: openai, base_url: "${fake.url}/v1", api_key: sk-live-SECRET-1234 }
  - { id: keyless, type: anthropic, base_url: "${fake.url}/v1" }
  - { id: dead, type: openai-compatible, base_url: "http://127.0.0.1:9/v1", api_key: sk-dead-SECRET-5678 }
models:
  - { id: broken, endpoint: chat, upstreams: [{ provider: keyless, model: claude-x }, { provider: dead, model: llama-3 }] }
  - { id: rescued, endpoint: chat, upstreams: [{ provider: keyless, model: claude-x }, { provider: openai, model: text-model }] }
plans:
  - { id: free, rank: 0, daily_tokens: 100000, requests_per_minute: 100 }
`,
  });
  key = await gw.newKey();
});
afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

const chat = (model: string) => gw.fetch('/v1/chat/completions', { method: 'POST', key, json: { model, messages: [{ role: 'user', content: 'hi' }] } });
const forRequest = (res: Response) => lines.filter((l) => l.reqId === res.headers.get('x-request-id'));

it('the 502 names each upstream and its failure, the keyless one without calling it', async () => {
  const before = fake.requests.length;
  const res = await chat('broken');
  expect(res.status).toBe(502);
  expect(await errorBody(res)).toEqual({
    message: "All upstreams failed for model 'broken': keyless [claude-x]: has no api_key; dead [llama-3]: connection refused (2 attempts).",
    type: 'provider_error',
    code: 'all_upstreams_failed',
    param: null,
  });
  expect(fake.requests.length).toBe(before);
});

it('logs every failed attempt at warn with provider, upstream model, failure class and duration, and one line for the request', async () => {
  const res = await chat('broken');
  await res.text();
  await new Promise((r) => setTimeout(r, 50));
  const mine = forRequest(res);
  const warns = mine.filter((l) => l.level === 40 && l.provider);
  expect(warns.map((l) => [l.msg, l.provider, l.upstream_model, l.failure, l.attempt])).toEqual([
    ["upstream skipped: provider 'keyless' has no api_key", 'keyless', 'claude-x', 'not_configured', undefined],
    ["upstream attempt failed: provider 'dead': connection refused", 'dead', 'llama-3', 'upstream_unreachable', 1],
    ["upstream attempt failed: provider 'dead': connection refused", 'dead', 'llama-3', 'upstream_unreachable', 2],
  ]);
  for (const w of warns.slice(1)) expect(w).toMatchObject({ model: 'broken', cause: 'ECONNREFUSED', ms: expect.any(Number) });
  const requestLines = mine.filter((l) => l.http);
  expect(requestLines).toHaveLength(1);
  expect(requestLines[0]).toMatchObject({ level: 40, code: 'all_upstreams_failed', http: { method: 'POST', url: '/v1/chat/completions', status: 502 } });
  expect(requestLines[0].msg).toMatch(/^POST \/v1\/chat\/completions 502 all_upstreams_failed [\d.]+ ms$/);
  expect(JSON.stringify(lines)).not.toMatch(/SECRET|127\.0\.0\.1:9/);
});

it('a working upstream after a keyless one answers, and the request line names it', async () => {
  const res = await chat('rescued');
  expect(res.status).toBe(200);
  expect(res.headers.get('x-gateway-upstream')).toBe('openai');
  await res.text();
  await new Promise((r) => setTimeout(r, 50));
  const line = forRequest(res).find((l) => l.http);
  expect(line).toMatchObject({ level: 30, upstream: 'openai', http: { status: 200 } });
  expect(line.code).toBeUndefined();
});

it('a JSON body sent as a form (curl -d without a content type) is 415 naming the content type', async () => {
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: JSON.stringify({ model: 'rescued', messages: [{ role: 'user', content: 'hi' }] }),
  });
  expect(res.status).toBe(415);
  expect(await errorBody(res)).toEqual({
    message: 'This endpoint takes application/json, not application/x-www-form-urlencoded (a JSON body sent as a form: with curl, add -H "Content-Type: application/json").',
    type: 'invalid_request_error',
    code: 'unsupported_media_type',
    param: null,
  });
});

it('metrics carry single prefixes', async () => {
  const text = await (await fetch(`${gw.url}/metrics`)).text();
  expect(text).toContain('\ngateway_process_cpu_user_seconds_total ');
  expect(text).toContain('\ngateway_nodejs_heap_size_used_bytes ');
  expect(text).not.toContain('gateway_process_process_');
});
