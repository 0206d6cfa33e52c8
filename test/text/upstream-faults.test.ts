// Upstreams that misbehave (issue 15): each time limit holds and fails over before the first byte
// or ends a started stream with one error event; a 200 whose body is an error is an error;
// messages name the provider and the failure class, never an address; only real upstream
// failures count against an upstream, and a failure of the gateway's own code counts against none.
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorBody, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { startFakeUpstreams, type FakeUpstreams } from '../helpers/fake-upstreams.ts';
import { postJson, upstreamLimits } from '../../server/upstream/http.ts';
import { withFailover } from '../../server/routing/failover.ts';

/** An upstream's entry in an all_upstreams_failed message: `bad [model]: reason`. */
const listed = (provider: string, reason: string) => new RegExp(`${provider}( \\[[^\\]]*\\])?: ${reason.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`);

type Json = Record<string, any>;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// Short limits so the tests run fast: first byte/event 800 ms, idle 800 ms, a plain answer 1500 ms.
const FIRST_BYTE = 800;
const IDLE = 800;
const TOTAL = 1500;
const SLACK = 700;

const chunk = (content: string) => JSON.stringify({ id: 'chatcmpl-bad', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content }, finish_reason: null }] });

/** An upstream that misbehaves as its model name says (OpenAI chat, Responses, embeddings and Anthropic paths). */
async function startMisbehaving(): Promise<{ url: string; hits: string[]; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const hits: string[] = [];
  const server: Server = createServer((req, res) => void (async () => {
    const parts: Buffer[] = [];
    for await (const c of req) parts.push(c as Buffer);
    const body = JSON.parse(Buffer.concat(parts).toString('utf8') || '{}') as Json;
    const model: string = body.model ?? '';
    hits.push(model);
    await behave(model, !!body.stream, req.url ?? '', res);
  })());
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((r) => server.close(() => r()));
    },
  };
}

/** Writes `text` one byte every 400 ms until the connection closes (it never completes). */
async function trickle(res: ServerResponse, text: string) {
  for (let i = 0; !res.destroyed; i = (i + 1) % text.length) {
    res.write(text[i]);
    await sleep(400);
  }
}

async function behave(model: string, stream: boolean, path: string, res: ServerResponse) {
  const sse = { 'content-type': 'text/event-stream' };
  const json = { 'content-type': 'application/json' };
  switch (model) {
    case 'trickle':
      res.writeHead(200, stream ? sse : json);
      return trickle(res, stream ? 'data: {"id":"chatcmpl-bad","choices":[' : '{"id":"chatcmpl-bad","object":"chat.completion","choices":[');
    case 'hang-before-headers':
      return; // never answers
    case 'hang-after-headers':
      res.writeHead(200, stream ? sse : json);
      return res.flushHeaders();
    case 'stall':
      // Two events, then silence (the connection stays open).
      res.writeHead(200, sse);
      res.write(`data: ${chunk('Hel')}\n\n`);
      return res.write(`data: ${chunk('lo')}\n\n`);
    case 'error200':
      res.writeHead(200, json);
      if (path.endsWith('/messages')) return res.end(JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }));
      return res.end(JSON.stringify({ error: { message: 'Provider returned error', code: 502 } }));
    case 'error200-400':
      res.writeHead(200, json);
      return res.end(JSON.stringify({ error: { message: 'max_tokens is too large', code: 400 } }));
    case 'sse-error-first':
      res.writeHead(200, sse);
      return res.end(`data: ${JSON.stringify({ error: { message: 'Upstream overloaded', code: 503 } })}\n\n`);
    case 'sse-error-mid':
      res.writeHead(200, sse);
      res.write(`data: ${chunk('Hel')}\n\n`);
      return res.end(`data: ${JSON.stringify({ error: { message: 'Upstream overloaded', code: 503 } })}\n\n`);
    case 'reset':
      return res.socket?.destroy();
    default:
      res.writeHead(404, json);
      return res.end(JSON.stringify({ error: { message: `no behaviour ${model}` } }));
  }
}

let bad: Awaited<ReturnType<typeof startMisbehaving>>;
let fake: FakeUpstreams;
let gw: TestGateway;
let key: string;
let deadPort: number;

const limits = `connect_timeout_ms: 500, first_byte_timeout_ms: ${FIRST_BYTE}, idle_timeout_ms: ${IDLE}, timeout_ms: ${TOTAL}`;
const onlyBad = (id: string, upstream: string, endpoint = 'chat', provider = 'bad') => `  - { id: ${id}, endpoint: ${endpoint}, upstreams: [{ provider: ${provider}, model: ${upstream} }] }`;
const badThenGood = (id: string, upstream: string, endpoint = 'chat', good = 'text-model') =>
  `  - { id: ${id}, endpoint: ${endpoint}, upstreams: [{ provider: bad, model: ${upstream} }, { provider: good, model: ${good} }] }`;

beforeAll(async () => {
  [bad, fake] = await Promise.all([startMisbehaving(), startFakeUpstreams()]);
  // A port nobody listens on: connection refused.
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  deadPort = (probe.address() as AddressInfo).port;
  await new Promise<void>((r) => probe.close(() => r()));
  gw = await startTestGateway({
    // Each test fails the same upstreams on purpose: breakers would set them aside (test/routing covers them).
    config: `
routing: { circuit_breaker: { enabled: false } }
providers:
  - { id: bad, type: openai, base_url: "${bad.url}/v1", api_key: sk-bad, ${limits} }
  - { id: bad-anthropic, type: anthropic, base_url: "${bad.url}/v1", api_key: sk-bad, ${limits} }
  - { id: dead, type: openai, base_url: "http://127.0.0.1:${deadPort}/v1", api_key: sk-dead, ${limits} }
  - { id: good, type: openai, base_url: "${fake.url}/v1", api_key: sk-good }
models:
${[
  onlyBad('trickle-only', 'trickle'),
  badThenGood('trickle-then-good', 'trickle'),
  onlyBad('hang-before-headers', 'hang-before-headers'),
  onlyBad('hang-after-headers', 'hang-after-headers'),
  badThenGood('hang-then-good', 'hang-before-headers'),
  onlyBad('stall', 'stall'),
  onlyBad('error200-only', 'error200'),
  badThenGood('error200-then-good', 'error200'),
  onlyBad('error200-400', 'error200-400'),
  onlyBad('messages-error200', 'error200', 'messages', 'bad-anthropic'),
  badThenGood('responses-error200-then-good', 'error200', 'responses'),
  badThenGood('embed-error200-then-good', 'error200', 'embeddings', 'text-embedding-3-small'),
  badThenGood('sse-error-first-then-good', 'sse-error-first'),
  onlyBad('sse-error-mid', 'sse-error-mid'),
  onlyBad('reset', 'reset'),
  onlyBad('refused', 'anything', 'chat', 'dead'),
  `  - { id: good-only, endpoint: chat, upstreams: [{ provider: good, model: text-model }] }`,
].join('\n')}
plans:
  - { id: free, rank: 0, daily_tokens: 10000000, requests_per_minute: 1000 }
key_cache_ttl_ms: 500
client_disconnect_drain_ms: 2000
`,
  });
  key = await gw.newKey();
});
afterAll(async () => {
  await gw?.close();
  await Promise.all([bad?.close(), fake?.close()]);
});

const chat = (model: string, stream = false, extra: Json = {}) =>
  gw.fetch('/v1/chat/completions', { method: 'POST', key, json: { model, messages: [{ role: 'user', content: 'hi' }], ...(stream ? { stream: true } : {}), ...extra } });
/** What the health history holds for a model, per provider, summed over its minute buckets (written first, so a bucket boundary or a timed flush between attempts changes nothing). */
async function health(model: string): Promise<Record<string, { requests: number; errors: number; lastError: string | null }>> {
  await gw.services.health.flush();
  const rows = await gw.services.db.prisma.modelHealthSample.findMany({ where: { model }, orderBy: { bucketStart: 'asc' } });
  const out: Record<string, { requests: number; errors: number; lastError: string | null }> = {};
  for (const r of rows) {
    const p = (out[r.provider] ??= { requests: 0, errors: 0, lastError: null });
    p.requests += r.requests;
    p.errors += r.errors;
    p.lastError = r.lastErrorCode ?? p.lastError;
  }
  return out;
}
/** No address, host or port of ours in what a client reads. */
const noAddress = (text: string) => {
  expect(text).not.toContain('127.0.0.1');
  expect(text).not.toMatch(/:\d{2,5}\b/);
  expect(text).not.toMatch(/ECONN|EPIPE|UND_ERR/);
};
async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await fn();
  return { value, ms: performance.now() - started };
}
/** SSE events of a finished stream. */
const events = (text: string) => text.split('\n\n').filter(Boolean);

describe('time limits', () => {
  it('a plain answer trickling forever is cut by the total deadline, on every attempt', async () => {
    const { value: res, ms } = await timed(() => chat('trickle-only'));
    // Every attempt ran out of time: the gateway time-out (524), not an upstream's failure (502).
    expect(res.status).toBe(524);
    const err = await errorBody(res);
    expect(err).toMatchObject({ type: 'server_error', code: 'upstream_timeout' });
    expect(err.message).toMatch(/^No upstream answered model 'trickle-only' in time: /);
    expect(err.message).toMatch(listed('bad', `timed out: no complete answer within ${TOTAL} ms`));
    // Two attempts of TOTAL each and one short backoff.
    expect(ms).toBeGreaterThanOrEqual(2 * TOTAL - 50);
    expect(ms).toBeLessThan(2 * TOTAL + 600 + SLACK);
    expect(await health('trickle-only')).toEqual({ bad: { requests: 2, errors: 2, lastError: 'upstream_timeout' } });
  });

  it('a stream trickling bytes that never make an event is cut at the first-event limit, then fails over before the first byte', async () => {
    const before = fake.requests.length;
    const { value: res, ms } = await timed(async () => {
      const r = await chat('trickle-then-good', true);
      return { r, text: await r.text() };
    });
    expect(res.r.status).toBe(200);
    expect(res.r.headers.get('x-gateway-upstream')).toBe('good');
    expect(res.text).toContain('data: [DONE]');
    expect(res.text).not.toContain('"error"');
    expect(fake.requests.length - before).toBe(1);
    expect(ms).toBeLessThan(2 * FIRST_BYTE + 600 + SLACK);
    expect(await health('trickle-then-good')).toEqual({ bad: { requests: 2, errors: 2, lastError: 'upstream_timeout' }, good: { requests: 1, errors: 0, lastError: null } });
  });

  it('an upstream that never sends headers is cut at the first-byte limit (plain and stream)', async () => {
    for (const stream of [false, true]) {
      const { value: res, ms } = await timed(() => chat('hang-before-headers', stream));
      expect(res.status).toBe(524);
      const err = await errorBody(res);
      expect(err.code).toBe('upstream_timeout');
      expect(err.message).toMatch(listed('bad', `timed out waiting for the first byte after ${FIRST_BYTE} ms`));
      expect(ms).toBeLessThan(2 * FIRST_BYTE + 600 + SLACK);
    }
    // And a healthy second upstream answers instead.
    const res = await chat('hang-then-good');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-gateway-upstream')).toBe('good');
  });

  it('headers then nothing: a stream is cut at the first-event limit, a plain answer at the total deadline', async () => {
    let { value: res, ms } = await timed(() => chat('hang-after-headers', true));
    expect(res.status).toBe(524);
    expect((await errorBody(res)).message).toMatch(listed('bad', `timed out waiting for the first event after ${FIRST_BYTE} ms`));
    expect(ms).toBeLessThan(2 * FIRST_BYTE + 600 + SLACK);
    ({ value: res, ms } = await timed(() => chat('hang-after-headers')));
    expect(res.status).toBe(524);
    expect((await errorBody(res)).message).toMatch(listed('bad', `timed out: no complete answer within ${TOTAL} ms`));
    expect(ms).toBeLessThan(2 * TOTAL + 600 + SLACK);
  });

  it('a stream that stalls after its first events ends with one upstream_timeout error event, counted against the upstream', async () => {
    expect(await health('stall')).toEqual({});
    const { value, ms } = await timed(async () => {
      const r = await chat('stall', true);
      return { status: r.status, text: await r.text() };
    });
    expect(value.status).toBe(200);
    const evs = events(value.text);
    expect(evs[0]).toContain('Hel');
    const errorsSent = evs.filter((e) => e.includes('"error"'));
    expect(errorsSent).toHaveLength(1);
    const last = JSON.parse(evs.at(-1)!.replace(/^data: /, ''));
    expect(last.error).toMatchObject({ type: 'provider_error', code: 'upstream_timeout' });
    expect(last.error.message).toContain(`provider 'bad': stalled: nothing received for ${IDLE} ms`);
    expect(value.text).not.toContain('[DONE]');
    expect(ms).toBeLessThan(IDLE + SLACK);
    expect((await health('stall')).bad).toEqual({ requests: 1, errors: 1, lastError: 'upstream_timeout' });
  });
});

describe('a 200 whose body is an error', () => {
  it('chat: fails over to the next upstream, and counts as the first one’s failure', async () => {
    const res = await chat('error200-then-good');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-gateway-upstream')).toBe('good');
    expect(await health('error200-then-good')).toEqual({ bad: { requests: 2, errors: 2, lastError: 'http_502' }, good: { requests: 1, errors: 0, lastError: null } });
    const only = await chat('error200-only');
    expect(only.status).toBe(502);
    expect((await errorBody(only)).message).toMatch(listed('bad', "reported an error: Provider returned error"));
  });

  it('is classified by the status it names: a 400 inside is the client’s request, not retried', async () => {
    const before = bad.hits.length;
    const res = await chat('error200-400');
    expect(res.status).toBe(400);
    expect(await errorBody(res)).toMatchObject({ type: 'invalid_request_error', code: 'upstream_invalid_request', message: expect.stringContaining('max_tokens is too large') });
    expect(bad.hits.length - before).toBe(1);
  });

  it('Messages: Anthropic’s {"type": "error"} with 200 is a failure (overloaded: retried, then 503)', async () => {
    const res = await gw.fetch('/v1/messages', { method: 'POST', key, json: { model: 'messages-error200', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] } });
    expect(res.status).toBe(503);
    const body = (await res.json()) as Json;
    expect(body.error).toMatchObject({ type: 'provider_error', code: 'all_upstreams_failed' });
    expect(body.error.message).toMatch(listed('bad-anthropic', "reported an error: Overloaded"));
    expect(await health('messages-error200')).toEqual({ 'bad-anthropic': { requests: 2, errors: 2, lastError: 'http_503' } });
  });

  it('Responses and embeddings fail over too', async () => {
    const r = await gw.fetch('/v1/responses', { method: 'POST', key, json: { model: 'responses-error200-then-good', input: 'hi' } });
    expect(r.status).toBe(200);
    expect(r.headers.get('x-gateway-upstream')).toBe('good');
    expect((await health('responses-error200-then-good')).bad).toMatchObject({ errors: 2 });
    const e = await gw.fetch('/v1/embeddings', { method: 'POST', key, json: { model: 'embed-error200-then-good', input: 'hi' } });
    expect(e.status).toBe(200);
    expect(((await e.json()) as Json).data).toHaveLength(1);
    expect(await health('embed-error200-then-good')).toMatchObject({ bad: { errors: 2 }, good: { errors: 0 } });
  });

  it('an SSE error event before any content fails over before the first byte', async () => {
    const res = await chat('sse-error-first-then-good', true);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-gateway-upstream')).toBe('good');
    const text = await res.text();
    expect(text).not.toContain('"error"');
    expect(text).toContain('data: [DONE]');
    expect(await health('sse-error-first-then-good')).toMatchObject({ bad: { requests: 2, errors: 2, lastError: 'http_503' }, good: { errors: 0 } });
  });

  it('an SSE error event mid-stream is one error event, a 502 in the ledger and a failure in the health history', async () => {
    const res = await chat('sse-error-mid', true);
    const requestId = res.headers.get('x-request-id')!;
    const evs = events(await res.text());
    expect(evs.filter((e) => e.includes('"error"'))).toHaveLength(1);
    expect(JSON.parse(evs.at(-1)!.replace(/^data: /, '')).error).toMatchObject({ type: 'provider_error', code: 'upstream_error', message: expect.stringContaining("provider 'bad': reported an error: Upstream overloaded") });
    expect(await health('sse-error-mid')).toEqual({ bad: { requests: 1, errors: 1, lastError: 'http_503' } });
    await gw.services.ledger.flush();
    const row = await gw.services.db.prisma.usageRecord.findFirst({ where: { requestId } });
    expect(row).toMatchObject({ status: 502, provider: 'bad' });
  });
});

describe('network failures name the provider and the class, never an address', () => {
  it('connection refused', async () => {
    const res = await chat('refused');
    expect(res.status).toBe(502);
    const err = await errorBody(res);
    expect(err.message).toMatch(listed('dead', "connection refused"));
    noAddress(err.message);
    expect(await health('refused')).toEqual({ dead: { requests: 2, errors: 2, lastError: 'upstream_unreachable' } });
  });

  it('connection reset, plain and stream', async () => {
    for (const stream of [false, true]) {
      const res = await chat('reset', stream);
      expect(res.status).toBe(502);
      const err = await errorBody(res);
      expect(err.message).toMatch(/bad \[[^\]]*\]: connection (reset|closed before the answer was complete)/);
      noAddress(err.message);
    }
  });
});

describe('the gateway’s own failures', () => {
  it('a body too deep to serialize is refused at once: no upstream call, no retry, nothing recorded against the upstream', async () => {
    const depth = 10_000;
    const raw = `{"model":"good-only","messages":[{"role":"user","content":"hi"}],"x_unknown":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}`;
    const before = fake.requests.length;
    const res = await gw.fetch('/v1/chat/completions', { method: 'POST', key, body: raw, headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(400);
    const err = await errorBody(res);
    expect(err.type).toBe('invalid_request_error');
    expect(err.message).not.toMatch(/call stack|upstream/i);
    expect(fake.requests.length - before).toBe(0);
    expect(await health('good-only')).toEqual({});
  });
});

describe('withFailover + postJson, below the HTTP layer', () => {
  const recorder = () => {
    const calls: unknown[][] = [];
    return { calls, health: { record: (...a: unknown[]) => (calls.push(a), 0), recordLateFailure: (...a: unknown[]) => void calls.push(a) } as never };
  };
  const metrics = { upstreamAttempts: { inc() {} }, upstreamLatency: { observe() {} } } as never;
  const limitsOf = upstreamLimits({ timeout_ms: TOTAL, first_byte_timeout_ms: FIRST_BYTE, idle_timeout_ms: IDLE });

  it('a body that cannot be serialized is the gateway’s failure: one attempt, no network call, no health record', async () => {
    const cyclic: Json = { model: 'text-model' };
    cyclic.self = cyclic;
    const { calls, health: h } = recorder();
    let attempts = 0;
    const before = fake.requests.length;
    const run = withFailover(
      [{ provider: { id: 'good' } }, { provider: { id: 'other' } }],
      async () => {
        attempts++;
        return postJson({ provider: 'good', url: `${fake.url}/v1/chat/completions`, headers: {}, body: cyclic, limits: limitsOf });
      },
      { model: 'm', health: h, metrics },
    );
    await expect(run).rejects.toThrow(TypeError);
    expect(attempts).toBe(1);
    expect(calls).toEqual([]);
    expect(fake.requests.length - before).toBe(0);
  });

  it('a stack overflow while building the request is a 400, recorded against no upstream', async () => {
    const { calls, health: h } = recorder();
    const recurse = (n: number): number => (n ? recurse(n + 1) + 1 : 0);
    const run = withFailover([{ provider: { id: 'good' } }], async () => recurse(1), { model: 'm', health: h, metrics });
    await expect(run).rejects.toMatchObject({ status: 400, type: 'invalid_request_error' });
    expect(calls).toEqual([]);
  });

  it('a real upstream failure is recorded and retried', async () => {
    const { calls, health: h } = recorder();
    const run = withFailover(
      [{ provider: { id: 'dead' } }],
      () => postJson({ provider: 'dead', url: `http://127.0.0.1:${deadPort}/v1/chat/completions`, headers: {}, body: {}, limits: limitsOf }),
      { model: 'm', health: h, metrics, baseBackoffMs: 1 },
    );
    await expect(run).rejects.toMatchObject({ status: 502, code: 'all_upstreams_failed', message: expect.stringMatching(listed('dead', 'connection refused')) });
    expect(calls.map((c) => c.slice(0, 3).concat(c[4]))).toEqual([
      ['m', 'dead', false, 'upstream_unreachable'],
      ['m', 'dead', false, 'upstream_unreachable'],
    ]);
  });
});
