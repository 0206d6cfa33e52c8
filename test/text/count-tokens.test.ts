// POST /v1/messages/count_tokens through the Anthropic SDK (messages.countTokens, and the beta
// client's `?beta=true`) on every kind of model: the upstream's own count where it has one (with
// the request as a generation would send it there), the gateway's tokenizer elsewhere, said in
// X-Gateway-Token-Count; admitted like any request and billed nowhere.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTextGateway } from '../helpers/text-gateway.ts';

let t: Awaited<ReturnType<typeof startTextGateway>>;
let an: Anthropic;
beforeAll(async () => {
  t = await startTextGateway();
  an = new Anthropic({ baseURL: t.gw.url, apiKey: t.key, maxRetries: 0 });
});
afterAll(() => t?.close());

const lastUpstream = () => t.fake.requests[t.fake.requests.length - 1]!;
const schema = { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] };
const params = {
  system: 'You are terse.',
  messages: [
    { role: 'user' as const, content: 'Hello, world!' },
    { role: 'assistant' as const, content: [{ type: 'tool_use' as const, id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } }] },
    { role: 'user' as const, content: [{ type: 'tool_result' as const, tool_use_id: 'toolu_1', content: 'Sunny' }] },
  ],
  tools: [{ name: 'get_weather', description: 'The weather of a city', input_schema: schema }],
};

/** The count and the response's headers, through the SDK. */
async function count(model: string, p: Partial<Anthropic.MessageCountTokensParams> = params) {
  const { data, response } = await an.messages.countTokens({ model, ...p } as Anthropic.MessageCountTokensParams).withResponse();
  return { tokens: data.input_tokens, source: response.headers.get('x-gateway-token-count'), upstream: response.headers.get('x-gateway-upstream'), headers: response.headers };
}

describe('counted by the upstream', () => {
  it('Anthropic: the request passed through to count_tokens, the model the upstream one', async () => {
    expect(await count('anthropic-text')).toMatchObject({ tokens: 1003, source: 'upstream', upstream: 'anthropic' });
    const sent = lastUpstream();
    expect(sent.path).toBe('/v1/messages/count_tokens');
    expect(sent.headers['x-api-key']).toBe('sk-ant-secret');
    expect(sent.body).toEqual({ model: 'text-model', system: 'You are terse.', messages: params.messages, tools: params.tools });
  });

  it('OpenAI: translated into a Responses input for responses/input_tokens', async () => {
    expect(await count('openai-text')).toMatchObject({ tokens: 3003, source: 'upstream', upstream: 'openai' });
    const sent = lastUpstream();
    expect(sent.path).toBe('/v1/responses/input_tokens');
    expect(sent.headers.authorization).toBe('Bearer sk-openai-secret');
    expect(sent.body).toEqual({
      model: 'text-model',
      input: [
        { role: 'user', content: [{ type: 'input_text', text: 'Hello, world!' }] },
        { type: 'function_call', call_id: 'toolu_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call_output', call_id: 'toolu_1', output: 'Sunny' },
      ],
      instructions: 'You are terse.',
      tools: [{ type: 'function', name: 'get_weather', description: 'The weather of a city', parameters: schema, strict: false }],
    });
  });

  it('Gemini: the generation request, translated, as countTokens’ generateContentRequest', async () => {
    expect(await count('gemini-text')).toMatchObject({ tokens: 2003, source: 'upstream', upstream: 'gemini' });
    const sent = lastUpstream();
    expect(sent.path).toBe('/v1beta/models/text-model:countTokens');
    expect(sent.headers['x-goog-api-key']).toBe('gemini-secret');
    expect(sent.body.generateContentRequest).toMatchObject({
      model: 'models/text-model',
      systemInstruction: { parts: [{ text: 'You are terse.' }] },
      contents: [
        { role: 'user', parts: [{ text: 'Hello, world!' }] },
        { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }] },
        { role: 'user', parts: [{ functionResponse: { name: 'get_weather' } }] },
      ],
      tools: [{ functionDeclarations: [{ name: 'get_weather', description: 'The weather of a city' }] }],
    });
  });

  it('the beta client (`?beta=true`) is answered the same', async () => {
    const r = await an.beta.messages.countTokens({ model: 'anthropic-text', messages: [{ role: 'user', content: 'Hi' }], betas: ['token-counting-2024-11-01'] });
    expect(r.input_tokens).toBe(1001);
  });
});

describe('POST /v1/responses/input_tokens (the openai SDK’s responses.inputTokens.count)', () => {
  const input = [
    { role: 'user' as const, content: 'Hello, world!' },
    { type: 'function_call' as const, call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
    { type: 'function_call_output' as const, call_id: 'call_1', output: 'Sunny' },
  ];
  const tools = [{ type: 'function' as const, name: 'get_weather', description: 'The weather of a city', parameters: schema, strict: false }];
  const countIn = async (model: string) => {
    const oa = new OpenAI({ baseURL: `${t.gw.url}/v1`, apiKey: t.key, maxRetries: 0 });
    const { data, response } = await oa.responses.inputTokens.count({ model, input, instructions: 'You are terse.', tools }).withResponse();
    return { data, source: response.headers.get('x-gateway-token-count'), upstream: response.headers.get('x-gateway-upstream') };
  };

  it('OpenAI: the client’s own body passed through, the model the upstream one', async () => {
    expect(await countIn('openai-text')).toEqual({ data: { object: 'response.input_tokens', input_tokens: 3003 }, source: 'upstream', upstream: 'openai' });
    expect(lastUpstream().path).toBe('/v1/responses/input_tokens');
    expect(lastUpstream().body).toEqual({ model: 'text-model', input, instructions: 'You are terse.', tools });
  });

  it('Anthropic: translated to count_tokens', async () => {
    expect(await countIn('anthropic-text')).toEqual({ data: { object: 'response.input_tokens', input_tokens: 1003 }, source: 'upstream', upstream: 'anthropic' });
    expect(lastUpstream().body).toMatchObject({ model: 'text-model', system: 'You are terse.', tools: [{ name: 'get_weather', description: 'The weather of a city', input_schema: schema }] });
    expect(lastUpstream().body).not.toHaveProperty('max_tokens');
  });

  it('an OpenAI-compatible server: estimated by the gateway', async () => {
    // 3 a request; system 3 + 4; the message 3 + 4; the call 3 + 2 (name) + 5 (arguments); its result 3 + 1; the tool 2 + 5 + 19.
    const r = await countIn('compat-text');
    expect(r).toMatchObject({ source: 'estimate', upstream: null });
    expect(r.data.input_tokens).toBe(57);
  });
});

describe('counted by the gateway', () => {
  it('an OpenAI-compatible server has no count: o200k_base, said to be an estimate', async () => {
    // 3 for the request, 3 + 4 for the system prompt, 3 + 4 for the message.
    expect(await count('compat-text', { system: 'You are terse.', messages: [{ role: 'user', content: 'Hello, world!' }] })).toEqual(
      expect.objectContaining({ tokens: 17, source: 'estimate', upstream: null }),
    );
    // A tool adds its name (2), description (5) and schema (19).
    expect((await count('compat-text', { system: 'You are terse.', messages: [{ role: 'user', content: 'Hello, world!' }], tools: params.tools })).tokens).toBe(43);
    // Text that looks like a special token is counted as text, never refused.
    expect((await count('compat-text', { messages: [{ role: 'user', content: '<|endoftext|>' }] })).tokens).toBeGreaterThan(6);
  });

  it('an upstream whose count fails: the gateway counts, and says why', async () => {
    const r = await count('anthropic-fail500', { messages: [{ role: 'user', content: 'Hello, world!' }] });
    expect(r).toMatchObject({ tokens: 10, source: 'estimate', upstream: null });
    expect(r.headers.get('x-gateway-warnings')).toBe("the token count at provider 'anthropic' failed (upstream_error): counted by the gateway (o200k_base)");
  });
});

describe('admitted like any request, billed nowhere', () => {
  it('counts against requests per minute, holds no tokens, writes no ledger record', async () => {
    const key = await t.gw.newKey();
    const client = new Anthropic({ baseURL: t.gw.url, apiKey: key, maxRetries: 0 });
    const first = await client.messages.countTokens({ model: 'openai-text', messages: [{ role: 'user', content: 'Hi' }] }).withResponse();
    const second = await client.messages.countTokens({ model: 'openai-text', messages: [{ role: 'user', content: 'Hi' }] }).withResponse();
    expect(first.response.headers.get('x-ratelimit-limit-requests')).toBe('1000');
    expect(first.response.headers.get('x-ratelimit-remaining-requests')).toBe('999');
    expect(second.response.headers.get('x-ratelimit-remaining-requests')).toBe('998');
    expect(first.response.headers.get('x-ratelimit-limit-tokens')).toBeNull();
    await t.gw.services.ledger.flush();
    const ids = [first.response.headers.get('x-request-id')!, second.response.headers.get('x-request-id')!];
    expect(await t.gw.services.db.prisma.usageRecord.count({ where: { requestId: { in: ids } } })).toBe(0);
    // Usage counts the requests per minute, and nothing else: no tokens held or used, no request billed.
    const usage = await (await t.gw.fetch('/v1/usage', { key })).json();
    expect(usage).toMatchObject({
      limits: { daily_tokens: { used: 0, remaining: 1_000_000 }, requests_per_minute: { used: 2, remaining: 998 } },
      totals: { requests: 0, billed_tokens: 0 },
      by_model: [],
    });
  });

  it('a premium model is refused to a plan below it, in the Messages error shape', async () => {
    await expect(an.messages.countTokens({ model: 'premium-model', messages: [{ role: 'user', content: 'Hi' }] })).rejects.toMatchObject({
      status: 403,
      error: { type: 'error', error: { code: 'model_requires_higher_plan' } },
    });
  });

  it('without a key: 401; an unknown model or no messages: 400 naming the field', async () => {
    const anonymous = new Anthropic({ baseURL: t.gw.url, apiKey: 'sk-not-a-key', maxRetries: 0 });
    await expect(anonymous.messages.countTokens({ model: 'openai-text', messages: [{ role: 'user', content: 'Hi' }] })).rejects.toMatchObject({ status: 401 });
    await expect(an.messages.countTokens({ model: 'no-such-model', messages: [{ role: 'user', content: 'Hi' }] })).rejects.toMatchObject({ status: 400, error: { error: { code: 'model_not_found', param: 'model' } } });
    await expect(an.messages.countTokens({ model: 'openai-text', messages: [] })).rejects.toMatchObject({ status: 400, error: { error: { param: 'messages' } } });
  });
});
