// The Responses endpoint: {openai, openai-compatible, anthropic, gemini} × {non-stream, stream} ×
// {text, function tools round trip, image, json_schema, reasoning, web search, unsupported built-in},
// through the official openai SDK (`responses.create`, `responses.stream`) and the AI SDK.
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, jsonSchema, stepCountIs, streamText, tool } from 'ai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replayedForResponses } from '../helpers/replayed-answers.ts';
import { PROVIDERS, searchBackend, startTextGateway } from '../helpers/text-gateway.ts';

let t: Awaited<ReturnType<typeof startTextGateway>>;
let oa: OpenAI;
beforeAll(async () => {
  t = await startTextGateway(searchBackend);
  oa = new OpenAI({ baseURL: `${t.gw.url}/v1`, apiKey: t.key, maxRetries: 0 });
});
afterAll(() => t?.close());

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAAABJRU5ErkJggg==';
const weather = { type: 'function' as const, name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { location: { type: 'string' }, unit: { type: 'string' } }, required: ['location'] }, strict: false };
const schema = { type: 'object', properties: { answer: { type: 'string' }, confidence: { type: 'number' } }, required: ['answer', 'confidence'], additionalProperties: false };
const lastUpstream = () => t.fake.requests.filter((r) => !r.path.startsWith('/search')).at(-1)!;

type Params = OpenAI.Responses.ResponseCreateParamsNonStreaming;
async function respond(params: Params, stream: boolean): Promise<{ r: OpenAI.Responses.Response; headers: Headers }> {
  if (!stream) {
    const { data, response } = await oa.responses.create(params).withResponse();
    return { r: data, headers: response.headers };
  }
  const s = oa.responses.stream({ ...params, stream: true } as never);
  const r = await s.finalResponse();
  return { r, headers: new Headers() };
}

describe.each(PROVIDERS)('Responses → %s', (p) => {
  describe.each([false, true])('stream %s', (stream) => {
    it('text', async () => {
      const { r } = await respond({ model: `${p}-text`, instructions: 'Be brief.', input: 'Hello' }, stream);
      expect(r.status).toBe('completed');
      const answer = replayedForResponses(p, stream);
      expect(r.output_text).toBe(answer.text);
      expect(r.usage).toMatchObject({ input_tokens: answer.input, output_tokens: answer.output });
    });

    it('function tools with a function_call_output round trip', async () => {
      const { r } = await respond({ model: `${p}-text`, input: 'Weather in Paris?', tools: [weather] }, stream);
      const call = r.output.find((i): i is OpenAI.Responses.ResponseFunctionToolCall => i.type === 'function_call')!;
      expect(call).toMatchObject({ name: 'get_weather' });
      expect(JSON.parse(call.arguments)).toEqual({ location: 'Paris', unit: 'celsius' });
      const { r: second } = await respond(
        { model: `${p}-text`, tools: [weather], input: [{ role: 'user', content: 'Weather in Paris?' }, ...(r.output as OpenAI.Responses.ResponseInputItem[]), { type: 'function_call_output', call_id: call.call_id, output: '{"temp":21}' }] },
        stream,
      );
      expect(second.output_text).toContain('21');
    });

    it('image input', async () => {
      const { r } = await respond({ model: `${p}-image`, input: [{ role: 'user', content: [{ type: 'input_text', text: 'What is this?' }, { type: 'input_image', image_url: `data:image/png;base64,${PNG}`, detail: 'auto' }] }] }, stream);
      expect(r.output_text).toBe('I see an image.');
      expect(JSON.stringify(lastUpstream().body)).toContain(PNG);
    });

    it('json_schema output, validated', async () => {
      const { r } = await respond({ model: `${p}-text`, input: 'Answer', text: { format: { type: 'json_schema', name: 'answer', schema, strict: true } } }, stream);
      expect(JSON.parse(r.output_text)).toEqual({ answer: '42', confidence: 0.9 });
      await expect(respond({ model: `${p}-badjson`, input: 'Answer', text: { format: { type: 'json_schema', name: 'answer', schema } } }, stream)).rejects.toThrow(/invalid_structured_output|Structured output failed/);
    });

    it('reasoning effort', async () => {
      const { r } = await respond({ model: `${p}-reasoning`, input: '2+2?', reasoning: { effort: 'high' } }, stream);
      const reasoning = r.output.find((i): i is OpenAI.Responses.ResponseReasoningItem => i.type === 'reasoning')!;
      expect(reasoning.summary[0]!.text).toBe('Let me think about it step by step.');
      expect(r.output_text).toBe('The answer is 4.');
      const sent = lastUpstream().body;
      if (p === 'openai') expect(sent.reasoning).toEqual({ effort: 'high' });
      if (p === 'compat') expect(sent.reasoning_effort).toBe('high');
      if (p === 'anthropic') expect(sent.thinking).toEqual({ type: 'enabled', budget_tokens: 16384 });
      if (p === 'gemini') expect(sent.generationConfig.thinkingConfig.thinkingBudget).toBe(16384);
    });

    it('web search, cited as url_citation', async () => {
      const { r, headers } = await respond({ model: `${p}-text`, input: 'Weather in Paris today?', tools: [{ type: 'web_search_preview' }] }, stream);
      const message = r.output.find((i): i is OpenAI.Responses.ResponseOutputMessage => i.type === 'message')!;
      const text = message.content.find((c): c is OpenAI.Responses.ResponseOutputText => c.type === 'output_text')!;
      // OpenAI searches itself (the fake's scripted answer); Anthropic with its server tool, citing the whole
      // text block; the others through the gateway's search loop, whose [1] marker cites the first result.
      const hit = { type: 'url_citation', url: 'https://example.com/paris-weather', title: 'Paris weather' };
      const [answer, annotations] =
        p === 'openai'
          ? ['News: AI is everywhere.', [{ type: 'url_citation', url: 'https://example.com/news', title: 'News', start_index: 0, end_index: 4 }]]
          : p === 'anthropic'
            ? ['Paris is sunny today.', [{ ...hit, start_index: 0, end_index: 21 }]]
            : ['Paris is sunny today [1].', [{ ...hit, start_index: 21, end_index: 24 }]];
      expect(text.text).toBe(answer);
      expect(text.annotations).toEqual(annotations);
      if (!stream) expect(headers.get('x-gateway-stripped-tools')).toBeNull();
    });

    it('an unsupported built-in tool is stripped and named in the header', async () => {
      if (stream) {
        const res = await t.gw.fetch('/v1/responses', { method: 'POST', key: t.key, json: { model: `${p}-text`, input: 'hi', stream: true, tools: [{ type: 'code_interpreter', container: { type: 'auto' } }] } });
        expect(res.status).toBe(200);
        expect(res.headers.get('x-gateway-stripped-tools')).toBe(p === 'openai' ? null : 'code_interpreter');
        expect(await res.text()).toContain('response.completed');
        return;
      }
      const { r, headers } = await respond({ model: `${p}-text`, input: 'hi', tools: [{ type: 'code_interpreter', container: { type: 'auto' } }] }, stream);
      expect(r.status).toBe('completed');
      expect(headers.get('x-gateway-stripped-tools')).toBe(p === 'openai' ? null : 'code_interpreter');
      if (p !== 'openai') expect(JSON.stringify(lastUpstream().body)).not.toContain('code_interpreter');
    });
  });

  it('the stream helper assembles what the non-streaming call returns', async () => {
    const params: Params = { model: `${p}-reasoning`, input: '2+2?', reasoning: { effort: 'low' } };
    const { r: a } = await respond(params, false);
    const { r: b } = await respond(params, true);
    const shape = (r: OpenAI.Responses.Response) => ({ status: r.status, text: r.output_text, types: r.output.map((i) => i.type), usage: r.usage });
    expect(shape(b)).toEqual(shape(a));
  });
});

describe('events and failures', () => {
  it('numbers events from 0 without gaps and ends with response.completed', async () => {
    const res = await t.gw.fetch('/v1/responses', { method: 'POST', key: t.key, json: { model: 'gemini-text', input: 'Weather?', stream: true, tools: [weather] } });
    const events = (await res.text()).split('\n\n').filter(Boolean).map((f) => JSON.parse(f.split('\n')[1]!.slice(6)));
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events[0].type).toBe('response.created');
    expect(events.at(-1).type).toBe('response.completed');
    expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(['response.output_item.added', 'response.function_call_arguments.delta', 'response.function_call_arguments.done', 'response.output_item.done']));
  });

  it.each(['openai-miderror', 'anthropic-miderror', 'gemini-midcut'])('%s: an upstream failure mid-stream ends in error + response.failed', async (model) => {
    const res = await t.gw.fetch('/v1/responses', { method: 'POST', key: t.key, json: { model, input: 'hi', stream: true } });
    const events = (await res.text()).split('\n\n').filter(Boolean).map((f) => JSON.parse(f.split('\n')[1]!.slice(6)));
    expect(events.at(-2).type).toBe('error');
    expect(events.at(-1)).toMatchObject({ type: 'response.failed', response: { status: 'failed' } });
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    await expect(oa.responses.stream({ model, input: 'hi' }).finalResponse()).rejects.toThrow();
  });

  it('previous_response_id and item references need an OpenAI model', async () => {
    const res = await t.gw.fetch('/v1/responses', { method: 'POST', key: t.key, json: { model: 'anthropic-text', input: 'hi', previous_response_id: 'resp_1' } });
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).error.param).toBe('previous_response_id');
    const native = await t.gw.fetch('/v1/responses', { method: 'POST', key: t.key, json: { model: 'openai-text', input: 'hi', previous_response_id: 'resp_1', service_tier: 'flex', metadata: { a: 1 }, background: false } });
    expect(native.status).toBe(200);
    const sent = lastUpstream().body;
    expect(sent.previous_response_id).toBe('resp_1');
    for (const f of ['service_tier', 'metadata', 'background']) expect(sent).not.toHaveProperty(f);
  });
});

describe('web search billing', () => {
  it('adds the surcharge exactly once per request, also over several search rounds', async () => {
    const res = await t.gw.fetch('/v1/responses', { method: 'POST', key: t.key, json: { model: 'gemini-text', input: 'Weather in Paris?', tools: [{ type: 'web_search' }] } });
    expect(res.status).toBe(200);
    await t.gw.services.ledger.flush();
    const row = await t.gw.services.db.prisma.usageRecord.findFirst({ where: { requestId: res.headers.get('x-request-id')! } });
    // Two rounds: 40+6 then 60+7 tokens, plus the surcharge once.
    expect(row).toMatchObject({ surchargeTokens: 1000, promptTokens: 100, completionTokens: 13, billedTokens: 1113n });
    expect(t.fake.requests.filter((r) => r.path.startsWith('/search?')).length).toBeGreaterThan(0);
  });

  it('chat completions and Messages accept web search too', async () => {
    const chat = await t.gw.fetch('/v1/chat/completions', { method: 'POST', key: t.key, json: { model: 'gemini-text', messages: [{ role: 'user', content: 'Weather in Paris?' }], web_search_options: {} } });
    const c = (await chat.json()) as any;
    expect(c.choices[0].message.content).toBe('Paris is sunny today [1].');
    expect(c.choices[0].message.annotations[0]).toMatchObject({ type: 'url_citation', url_citation: { url: 'https://example.com/paris-weather', start_index: 21, end_index: 24 } });
    const msg = await t.gw.fetch('/v1/messages', { method: 'POST', key: t.key, json: { model: 'compat-text', max_tokens: 100, messages: [{ role: 'user', content: 'Weather in Paris?' }], tools: [{ type: 'web_search_20250305', name: 'web_search' }] } });
    expect(((await msg.json()) as any).content[0].text).toBe('Paris is sunny today [1].');
    const native = await t.gw.fetch('/v1/chat/completions', { method: 'POST', key: t.key, json: { model: 'anthropic-text', messages: [{ role: 'user', content: 'Weather in Paris?' }], web_search_options: {} } });
    expect(lastUpstream().body.tools).toEqual([{ type: 'web_search_20250305', name: 'web_search', max_uses: 5 }]);
    const n = (await native.json()) as any;
    expect(n.choices[0].message.annotations[0].url_citation.url).toBe('https://example.com/paris-weather');
  });

  it('an unreachable search backend is named to the model as such, never by its address', async () => {
    const down = await startTextGateway(() => 'web_search: { backend: searxng, base_url: "http://127.0.0.1:9" }');
    try {
      const res = await down.gw.fetch('/v1/chat/completions', { method: 'POST', key: down.key, json: { model: 'gemini-text', messages: [{ role: 'user', content: 'Weather in Paris?' }], web_search_options: {} } });
      expect(res.status).toBe(200);
      const second = down.fake.requests.at(-1)!.body;
      const result = second.contents.at(-1).parts[0].functionResponse.response;
      expect(JSON.stringify(result)).toContain('Search failed: the search backend could not be reached');
      expect(JSON.stringify(second)).not.toContain('127.0.0.1');
    } finally {
      await down.close();
    }
  });

  it('without a search backend, web search on a model that cannot search is stripped, not a failure', async () => {
    const bare = await startTextGateway();
    try {
      const res = await bare.gw.fetch('/v1/responses', { method: 'POST', key: bare.key, json: { model: 'gemini-text', input: 'hi', tools: [{ type: 'web_search_preview' }, { type: 'mcp', server_label: 'x', server_url: 'https://mcp.example.com' }] } });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-gateway-stripped-tools')).toBe('web_search_preview, mcp');
      // The same decision in the other formats: stripped where nobody can search, kept where the request passes through.
      const stripped = async (path: string, json: object) => {
        const r = await bare.gw.fetch(path, { method: 'POST', key: bare.key, json });
        expect(r.status).toBe(200);
        return r.headers.get('x-gateway-stripped-tools');
      };
      const chat = (model: string) => ({ model, messages: [{ role: 'user', content: 'Weather in Paris?' }], web_search_options: {} });
      const messages = (model: string) => ({ model, max_tokens: 100, messages: [{ role: 'user', content: 'Weather in Paris?' }], tools: [{ type: 'web_search_20250305', name: 'web_search' }] });
      expect(await stripped('/v1/chat/completions', chat('gemini-text'))).toBe('web_search');
      expect(await stripped('/v1/chat/completions', chat('openai-text'))).toBeNull();
      expect(await stripped('/v1/messages', messages('compat-text'))).toBe('web_search');
      expect(await stripped('/v1/messages', messages('anthropic-text'))).toBeNull();
    } finally {
      await bare.close();
    }
  });
});

describe('AI SDK Responses provider', () => {
  it.each(PROVIDERS)('→ %s: text, stream and a tool loop', async (p) => {
    const model = createOpenAI({ baseURL: `${t.gw.url}/v1`, apiKey: t.key }).responses(`${p}-text`);
    const g = await generateText({ model, prompt: 'Hello', maxRetries: 0 });
    expect(g.text).toBe(replayedForResponses(p, false).text);
    const s = streamText({ model, prompt: 'Hello', maxRetries: 0 });
    expect(await s.text).toBe(replayedForResponses(p, true).text);
    const loop = await generateText({
      model,
      prompt: 'Weather in Paris?',
      maxRetries: 0,
      stopWhen: stepCountIs(3),
      tools: { get_weather: tool({ inputSchema: jsonSchema<{ location: string }>({ type: 'object', properties: { location: { type: 'string' } }, required: ['location'] }), execute: async () => ({ temp: 21 }) }) },
    });
    expect(loop.text).toContain('21');
  });
});
