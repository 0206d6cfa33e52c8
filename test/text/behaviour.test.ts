// Pass-through fidelity, failover, failures before and during streams, client disconnects,
// SSRF protection and the 400 paths of the text endpoints, through HTTP.
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorBody } from '../helpers/gateway.ts';
import { startTextGateway } from '../helpers/text-gateway.ts';

let t: Awaited<ReturnType<typeof startTextGateway>>;
let oa: OpenAI;
beforeAll(async () => {
  t = await startTextGateway();
  oa = new OpenAI({ baseURL: `${t.gw.url}/v1`, apiKey: t.key, maxRetries: 0 });
});
afterAll(() => t?.close());

const post = (path: string, json: unknown, headers: Record<string, string> = {}) => t.gw.fetch(path, { method: 'POST', key: t.key, json, headers });
const requestsTo = (model: string) => t.fake.requests.filter((r) => r.body.model === model || r.path.includes(`/models/${model}:`));
/** The ledger record of a request, once written. */
async function ledgerRecord(requestId: string, waitMs = 0) {
  const deadline = Date.now() + waitMs;
  for (;;) {
    await t.gw.services.ledger.flush();
    const row = await t.gw.services.db.prisma.usageRecord.findFirst({ where: { requestId } });
    if (row || Date.now() >= deadline) return row;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('same format: pass through', () => {
  it('strips the spec’s fields, maps the model id, keeps unknown fields and forces usage upstream', async () => {
    const body = {
      model: 'openai-text',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      n: 2, service_tier: 'flex', metadata: { a: 'b' }, store: true, safety_identifier: 's', prompt_cache_key: 'k', user: 'u', deferred: true, plugins: [], provider: { x: 1 },
      logit_bias: { '50256': -100 }, vendor_extension: { keep: true },
    };
    const res = await post('/v1/chat/completions', body);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const text = await res.text();
    const sent = t.fake.requests[t.fake.requests.length - 1]!.body;
    expect(sent.model).toBe('text-model');
    for (const f of ['n', 'service_tier', 'metadata', 'store', 'safety_identifier', 'user', 'deferred', 'plugins', 'provider']) expect(sent).not.toHaveProperty(f);
    // A caching hint the OpenAI-wire upstream reads itself.
    expect(sent.prompt_cache_key).toBe('k');
    expect(sent.logit_bias).toEqual({ '50256': -100 });
    expect(sent.vendor_extension).toEqual({ keep: true });
    expect(sent.stream_options).toEqual({ include_usage: true });
    // The client did not ask for usage: it never sees the usage chunk, but the gateway billed it.
    expect(text).not.toContain('"usage":{');
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    expect(await ledgerRecord(res.headers.get('x-request-id')!)).toMatchObject({
      model: 'openai-text',
      provider: 'openai',
      upstreamModel: 'text-model',
      endpoint: 'chat',
      usageSource: 'reported',
      promptTokens: 16,
      completionTokens: 300,
      billedTokens: 316n,
    });
  });

  it('reports the gateway’s own processing time in X-Gateway-Overhead-Ms and a histogram', async () => {
    const res = await post('/v1/chat/completions', { model: 'openai-text', messages: [{ role: 'user', content: 'hi' }] });
    expect(Number(res.headers.get('x-gateway-overhead-ms'))).toBeGreaterThanOrEqual(0);
    expect(Number(res.headers.get('x-gateway-overhead-ms'))).toBeLessThan(1000);
    const metrics = await (await t.gw.fetch('/metrics')).text();
    expect(metrics).toMatch(/gateway_overhead_seconds_count\{endpoint="chat"\} [1-9]/);
  });

  it('leaves the upstream’s time out of X-Gateway-Overhead-Ms: its answer, a translation’s, failover backoff', async () => {
    // `*-delayed` upstreams wait 300 ms before answering; `backoff-then-ok` backs off ≥ 100 ms after a 500.
    for (const [model, atLeastMs] of [['openai-delayed', 300], ['anthropic-delayed', 300], ['backoff-then-ok', 100]] as const) {
      const started = performance.now();
      const res = await post('/v1/chat/completions', { model, messages: [{ role: 'user', content: 'hi' }] });
      const totalMs = performance.now() - started;
      expect(res.status).toBe(200);
      expect(totalMs).toBeGreaterThanOrEqual(atLeastMs);
      // What is left is the gateway's own work on one small request: far below the wait.
      expect(Number(res.headers.get('x-gateway-overhead-ms')), model).toBeLessThan(atLeastMs / 2);
    }
  });

  it('sends the usage chunk, with empty choices, last before [DONE] when asked', async () => {
    const res = await post('/v1/chat/completions', { model: 'openai-text', messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true } });
    const events = (await res.text()).split('\n\n').filter(Boolean);
    expect(events.at(-1)).toBe('data: [DONE]');
    const usageChunk = JSON.parse(events.at(-2)!.slice(6));
    expect(usageChunk.choices).toEqual([]);
    expect(usageChunk.usage.total_tokens).toBe(316);
  });

  it('skips OpenRouter keep-alive comments', async () => {
    const res = await post('/v1/chat/completions', { model: 'compat-keepalive', messages: [{ role: 'user', content: 'hi' }], stream: true });
    const text = await res.text();
    expect(text).not.toContain('OPENROUTER PROCESSING');
    expect(text).toContain('Holiday');
  });

  it('passes the anthropic-version and anthropic-beta headers to an Anthropic upstream, and the key is the provider’s', async () => {
    await post('/v1/messages', { model: 'anthropic-text', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }, { 'anthropic-version': '2023-06-01', 'anthropic-beta': 'tools-2024-05-16' });
    const r = t.fake.requests[t.fake.requests.length - 1]!;
    expect(r.headers['anthropic-version']).toBe('2023-06-01');
    expect(r.headers['anthropic-beta']).toBe('tools-2024-05-16');
    expect(r.headers['x-api-key']).toBe('sk-ant-secret');
    expect(r.body.model).toBe('text-model');
  });
});

describe('translation details', () => {
  it('hoists system and developer messages, merges tool results into one user turn, maps tool_choice and stop', async () => {
    await post('/v1/chat/completions', {
      model: 'anthropic-text',
      messages: [
        { role: 'system', content: 'S1' },
        { role: 'developer', content: 'S2' },
        { role: 'user', content: 'Q' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call.1', type: 'function', function: { name: 'a', arguments: '{"x":1}' } }, { id: 'call_2', type: 'function', function: { name: 'b', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'call.1', content: 'r1' },
        { role: 'tool', tool_call_id: 'call_2', content: 'r2' },
      ],
      tools: [{ type: 'function', function: { name: 'a', parameters: { type: 'object' } } }, { type: 'function', function: { name: 'b' } }],
      tool_choice: { type: 'function', function: { name: 'a' } },
      stop: 'END',
      temperature: 1.7,
      max_tokens: 50,
      seed: 1,
    });
    const sent = t.fake.requests[t.fake.requests.length - 1]!.body;
    expect(sent.system).toBe('S1\n\nS2');
    expect(sent.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(sent.messages[1].content.map((b: { id: string }) => b.id)).toEqual(['call_1', 'call_2']);
    expect(sent.messages[2].content).toEqual([
      { type: 'tool_result', tool_use_id: 'call_1', content: [{ type: 'text', text: 'r1' }] },
      { type: 'tool_result', tool_use_id: 'call_2', content: [{ type: 'text', text: 'r2' }] },
    ]);
    expect(sent.tool_choice).toEqual({ type: 'tool', name: 'a' });
    expect(sent.stop_sequences).toEqual(['END']);
    expect(sent.temperature).toBe(1);
    expect(sent.max_tokens).toBe(50);
    expect(sent).not.toHaveProperty('seed');
  });

  it('gives Anthropic a max_tokens when the chat request has none, and Gemini its generation config', async () => {
    await post('/v1/chat/completions', { model: 'anthropic-text', messages: [{ role: 'user', content: 'hi' }] });
    expect(t.fake.requests.at(-1)!.body.max_tokens).toBe(4096);
    await post('/v1/chat/completions', { model: 'gemini-text', messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'a' }, { role: 'user', content: 'b' }], max_tokens: 9, top_p: 0.5, top_k: 3, stop: ['x', 'y'], seed: 7, presence_penalty: 0.1, tool_choice: 'none' });
    const g = t.fake.requests.at(-1)!.body;
    expect(g.contents.map((c: { role: string }) => c.role)).toEqual(['user', 'model', 'user']);
    expect(g.generationConfig).toMatchObject({ maxOutputTokens: 9, topP: 0.5, topK: 3, stopSequences: ['x', 'y'], seed: 7, presencePenalty: 0.1 });
    expect(g.toolConfig).toEqual({ functionCallingConfig: { mode: 'NONE' } });
    expect(t.fake.requests.at(-1)!.headers['x-goog-api-key']).toBe('gemini-secret');
  });

  it('maps Messages tool_choice any and disable_parallel_tool_use to the chat format', async () => {
    await post('/v1/messages', {
      model: 'openai-text',
      max_tokens: 10,
      messages: [{ role: 'user', content: 'hi' }],
      tools: [{ name: 't', input_schema: { type: 'object' } }],
      tool_choice: { type: 'any', disable_parallel_tool_use: true },
      stop_sequences: ['S'],
    });
    const sent = t.fake.requests.at(-1)!.body;
    expect(sent.tool_choice).toBe('required');
    expect(sent.parallel_tool_calls).toBe(false);
    expect(sent.stop).toEqual(['S']);
    expect(sent.max_completion_tokens).toBe(10);
  });
});

describe('reasoning replay', () => {
  it('a chat client that sends the assistant message back returns Anthropic’s signed thinking unchanged', async () => {
    const first = await oa.chat.completions.create({ model: 'anthropic-reasoning', messages: [{ role: 'user', content: '2+2?' }], reasoning_effort: 'low' });
    const msg = first.choices[0]!.message as OpenAI.Chat.ChatCompletionMessage & { reasoning_details?: unknown[] };
    expect(msg.reasoning_details).toEqual([{ type: 'reasoning.text', text: 'Let me think about it step by step.', signature: 'sig-EqQBCkYIBxgCKkA' }]);
    await oa.chat.completions.create({
      model: 'anthropic-reasoning',
      reasoning_effort: 'low',
      messages: [{ role: 'user', content: '2+2?' }, msg as OpenAI.Chat.ChatCompletionMessageParam, { role: 'user', content: 'And 3+3?' }],
    });
    const sent = t.fake.requests.at(-1)!.body;
    expect(sent.messages[1].content[0]).toEqual({ type: 'thinking', thinking: 'Let me think about it step by step.', signature: 'sig-EqQBCkYIBxgCKkA' });
    expect(sent.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
  });

  it('a Gemini thought signature survives a chat tool round trip', async () => {
    const tools = [{ type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object' } } }];
    const first = await oa.chat.completions.create({ model: 'gemini-text', messages: [{ role: 'user', content: 'Weather?' }], tools });
    const call = first.choices[0]!.message.tool_calls![0]! as OpenAI.Chat.ChatCompletionMessageFunctionToolCall & { extra_content?: { google?: { thought_signature?: string } } };
    expect(call.extra_content?.google?.thought_signature).toBe('EqUCCqICAb4+fakeSignature==');
    await oa.chat.completions.create({
      model: 'gemini-text',
      tools,
      messages: [{ role: 'user', content: 'Weather?' }, first.choices[0]!.message as OpenAI.Chat.ChatCompletionMessageParam, { role: 'tool', tool_call_id: call.id, content: 'sunny' }],
    });
    const sent = t.fake.requests.at(-1)!.body;
    expect(sent.contents[1].parts[0]).toMatchObject({ functionCall: { name: 'get_weather' }, thoughtSignature: 'EqUCCqICAb4+fakeSignature==' });
    expect(sent.contents[2].parts[0]).toEqual({ functionResponse: { name: 'get_weather', response: { result: 'sunny' } } });
  });
});

describe('failover and upstream failures', () => {
  it('moves past 5xx and 429 upstreams to the next one and records every attempt', async () => {
    const before = t.fake.requests.length;
    const r = await oa.chat.completions.create({ model: 'failover', messages: [{ role: 'user', content: 'hi' }] });
    expect(r.choices[0]!.message.content).toContain('strawberry');
    const attempts = t.fake.requests.slice(before).map((x) => x.body.model ?? x.path);
    expect(attempts).toEqual(['fail500-model', 'fail500-model', 'fail429-model', 'fail429-model', expect.stringContaining('text-model')]);
    // Stored for the health history (summed over minute buckets: the attempts may straddle one).
    await t.gw.services.health.flush();
    const rows = await t.gw.services.db.prisma.modelHealthSample.findMany({ where: { model: 'failover' }, orderBy: { bucketStart: 'asc' } });
    const byProvider: Record<string, [number, number, string | null]> = {};
    for (const r of rows) {
      const p = (byProvider[r.provider] ??= [0, 0, null]);
      p[0] += r.requests;
      p[1] += r.errors;
      p[2] = r.lastErrorCode ?? p[2];
    }
    expect(byProvider).toEqual({ anthropic: [2, 2, 'http_429'], gemini: [1, 0, null], openai: [2, 2, 'http_500'] });
  });

  it('an upstream out of credits (402) is passed over at once for the next, not retried', async () => {
    const before = t.fake.requests.length;
    const r = await oa.chat.completions.create({ model: 'out-of-credits', messages: [{ role: 'user', content: 'hi' }] });
    expect(r.choices[0]!.message.content).toContain('strawberry');
    expect(t.fake.requests.slice(before).map((x) => x.body.model ?? x.path)).toEqual(['fail402-model', expect.stringContaining('text-model')]);
  });

  it('all upstreams failing is 502 provider_error (503 when all were rate limited)', async () => {
    let res = await post('/v1/chat/completions', { model: 'all-fail', messages: [{ role: 'user', content: 'hi' }] });
    expect(res.status).toBe(502);
    expect(await errorBody(res)).toMatchObject({ type: 'provider_error', code: 'all_upstreams_failed' });
    res = await post('/v1/chat/completions', { model: 'all-limited', messages: [{ role: 'user', content: 'hi' }], stream: true });
    expect(res.status).toBe(503);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect((await errorBody(res)).type).toBe('provider_error');
  });

  it('returns an upstream 400 as invalid_request_error without retrying', async () => {
    const before = t.fake.requests.length;
    const res = await post('/v1/messages', { model: 'gemini-fail400', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] });
    expect(res.status).toBe(400);
    expect(await errorBody(res)).toMatchObject({ type: 'invalid_request_error', code: 'upstream_invalid_request' });
    expect(t.fake.requests.length - before).toBe(1);
  });

  it.each([
    ['openai-midcut', 'chat'],
    ['anthropic-miderror', 'chat'],
    ['gemini-miderror', 'chat'],
    ['compat-miderror', 'chat'],
  ])('%s: a failure mid-stream is one error event in the chat format, then the stream closes', async (model) => {
    const res = await post('/v1/chat/completions', { model, messages: [{ role: 'user', content: 'hi' }], stream: true });
    expect(res.status).toBe(200);
    const events = (await res.text()).split('\n\n').filter(Boolean);
    const last = JSON.parse(events.at(-1)!.replace(/^data: /, ''));
    expect(last.error).toMatchObject({ type: 'provider_error' });
    expect(events.some((e) => e === 'data: [DONE]')).toBe(false);
    expect(events.filter((e) => e.includes('"error"'))).toHaveLength(1);
  });

  it.each(['anthropic-miderror', 'openai-midcut', 'gemini-miderror'])('%s: mid-stream failure is an error event for Messages clients', async (model) => {
    const an = new Anthropic({ baseURL: t.gw.url, apiKey: t.key, maxRetries: 0 });
    const stream = an.messages.stream({ model, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
    await expect(stream.finalMessage()).rejects.toThrow();
    const res = await post('/v1/messages', { model, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }], stream: true });
    const text = await res.text();
    expect(text).toMatch(/event: error\ndata: \{"type":"error","error":\{"message":"[^"]+","type":"provider_error"/);
    expect(text).not.toContain('message_stop');
  });
});

describe('client disconnect', () => {
  it('keeps reading the upstream for usage after the client goes away, and bills it', async () => {
    const controller = new AbortController();
    const res = await fetch(`${t.gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'anthropic-slow', messages: [{ role: 'user', content: 'hi' }], stream: true }),
      signal: controller.signal,
    });
    const reader = res.body!.getReader();
    await reader.read();
    controller.abort();
    const record = await ledgerRecord(res.headers.get('x-request-id')!, 6_000);
    expect(record).toMatchObject({ model: 'anthropic-slow', errorCode: 'client_disconnected', usageSource: 'reported', promptTokens: 12, completionTokens: 30, billedTokens: 42n });
  });
});

describe('images by URL', () => {
  it('refuses private, loopback and link-local targets when the bytes must be fetched (Gemini)', async () => {
    for (const url of ['https://127.0.0.1/a.png', 'https://169.254.169.254/latest', 'https://10.0.0.1/x.png', 'https://[::1]/x.png', 'https://localhost/x.png']) {
      const res = await post('/v1/chat/completions', { model: 'gemini-image', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url } }] }] });
      expect(res.status, url).toBe(400);
      expect(await errorBody(res)).toMatchObject({ type: 'invalid_request_error', code: 'invalid_image_url' });
    }
  });

  it('passes HTTPS URLs to providers that fetch them themselves', async () => {
    await post('/v1/chat/completions', { model: 'anthropic-image', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }] }] });
    expect(t.fake.requests.at(-1)!.body.messages[0].content[0]).toEqual({ type: 'image', source: { type: 'url', url: 'https://example.com/cat.png' } });
  });
});

describe('400 paths', () => {
  it.each([
    [{ messages: [{ role: 'user', content: 'x' }] }, 'missing_required_parameter', 'model'],
    [{ model: 'nope', messages: [{ role: 'user', content: 'x' }] }, 'model_not_found', 'model'],
    [{ model: 'openai-text', messages: [{ role: 'user', content: 'x' }], temperature: 3 }, 'invalid_parameter', 'temperature'],
    [{ model: 'openai-text', messages: 'hello' }, 'invalid_parameter', 'messages'],
    [{ model: 42, messages: [{ role: 'user', content: 'x' }] }, 'invalid_parameter', 'model'],
    [{ model: 'embed-model', messages: [{ role: 'user', content: 'x' }] }, 'model_not_supported', 'model'],
    [{ model: 'anthropic-text', messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'x', format: 'wav' } }] }] }, 'invalid_parameter', 'messages[0].content[0].type'],
  ])('chat %j → %s', async (body, code, param) => {
    const res = await post('/v1/chat/completions', body);
    expect(res.status).toBe(400);
    expect(await errorBody(res)).toMatchObject({ type: 'invalid_request_error', code, param });
  });

  it('premium models need a higher plan (403)', async () => {
    const res = await post('/v1/chat/completions', { model: 'premium-model', messages: [{ role: 'user', content: 'x' }] });
    expect(res.status).toBe(403);
    expect(await errorBody(res)).toMatchObject({ type: 'permission_error', code: 'model_requires_higher_plan', param: 'model' });
  });

  it('Messages: wrong types and ranges', async () => {
    const res = await post('/v1/messages', { model: 'openai-text', max_tokens: 'ten', messages: [{ role: 'user', content: 'x' }] });
    expect(await errorBody(res)).toMatchObject({ code: 'invalid_parameter', param: 'max_tokens' });
    const res2 = await post('/v1/messages', { model: 'openai-text', max_tokens: 5, messages: [{ role: 'tool', content: 'x' }] });
    expect(res2.status).toBe(400);
    expect(await res2.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', param: 'messages[0].role' } });
  });
});
