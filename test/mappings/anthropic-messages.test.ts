// server/providers/anthropic/messages.ts: canonical request → Messages body, and Anthropic's
// answers and SSE events → canonical, from recorded answers.
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_MAX_TOKENS,
  JSON_TOOL,
  MessagesStreamDecoder,
  decodeMessagesResponse,
  decodeUsage,
  encodeMessagesBody,
  mapStop,
  thinksAdaptively,
  toolId,
} from '../../server/providers/anthropic/messages.ts';
import { UnsupportedContentError } from '../../server/providers/types.ts';
import { UpstreamStreamError } from '../../server/upstream/errors.ts';
import type * as C from '../../server/translate/canonical.ts';
import { VERCEL, accumulate, at, atString, callContext, chunkLines, decodeStream, fixtureJson, joined, request, thrownBy } from './fixtures.ts';
import type * as AnthropicWire from '../../server/providers/anthropic/wire.ts';

const DIR = `${VERCEL}anthropic/src/__fixtures__/`;
/** A recorded answer's usage: every recording splits its cache writes by lifetime (`cache_creation`), so the 1-hour part is known. */
const usage = (inputTokens: number, outputTokens: number, cachedTokens = 0, cacheWriteTokens = 0, parts: Partial<C.Usage> = {}): C.Usage => ({
  inputTokens,
  outputTokens,
  cachedTokens,
  cacheWriteTokens,
  reasoningTokens: 0,
  cacheWrite1hTokens: 0,
  ...parts,
});
const renameTool = (text: string, from: string, to: string) => text.replaceAll(`"name":"${from}"`, `"name":"${to}"`);

describe('mapStop (Anthropic stop_reason → canonical)', () => {
  it.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['max_tokens', 'length'],
    ['model_context_window_exceeded', 'length'],
    ['tool_use', 'tool_calls'],
    ['refusal', 'refusal'],
    ['pause_turn', 'pause'],
    [null, 'stop'],
  ] as const)('%s → %s', (reason, expected) => {
    expect(mapStop(reason)).toBe(expected);
  });
});

describe('decodeUsage', () => {
  it('input_tokens exclude the cache: the canonical input is their sum (prompt-cache stream, message_delta: 6 + 3337 written + 6289 read)', () => {
    const delta = chunkLines(`${DIR}anthropic-code-execution-20260120-prompt-cache.1.chunks.txt`).map((l) => JSON.parse(l)).find((e) => at(e, 'type') === 'message_delta');
    // message_delta never repeats the split by lifetime: no 1-hour part is known from it alone.
    expect(decodeUsage(at(delta, 'usage') as Record<string, unknown>)).toEqual({ ...usage(9632, 198, 6289, 3337, { webSearchCalls: 0 }), cacheWrite1hTokens: undefined });
  });

  it('a plain answer (anthropic-text.json: 12 in, 29 out)', () => {
    expect(decodeUsage(at(fixtureJson(`${DIR}anthropic-text.json`), 'usage') as Record<string, unknown>)).toEqual(usage(12, 29));
  });

  it('is null when there is none', () => {
    expect(decodeUsage(undefined)).toBeNull();
  });

  it('the thinking is named in output_tokens_details.thinking_tokens, a part of the output (anthropic-claude-opus-5-reasoning-high.1.json: 1699 out, 139 thinking)', () => {
    expect(decodeUsage(at(fixtureJson(`${DIR}anthropic-claude-opus-5-reasoning-high.1.json`), 'usage') as AnthropicWire.Usage)).toEqual(usage(51, 1699, 0, 0, { reasoningTokens: 139 }));
  });

  it('searches are server_tool_use.web_search_requests (anthropic-web-search-tool.1.json: 2)', () => {
    expect(decodeUsage(at(fixtureJson(`${DIR}anthropic-web-search-tool.1.json`), 'usage') as AnthropicWire.Usage)).toEqual(usage(27118, 600, 0, 0, { webSearchCalls: 2 }));
  });

  it("compaction's own step is added to the top-level counts, which leave it out (anthropic-compaction.1.json: 682 + 60385 in, 1320 + 592 out)", () => {
    expect(decodeUsage(at(fixtureJson(`${DIR}anthropic-compaction.1.json`), 'usage') as AnthropicWire.Usage)).toEqual(usage(682 + 60385, 1320 + 592, 0, 0, { webSearchCalls: 0 }));
  });

  it("an advisor's step ran on another model: not this model's usage (anthropic-advisor-20260301.1.json: the executor's 2414 in, 3200 out)", () => {
    expect(decodeUsage(at(fixtureJson(`${DIR}anthropic-advisor-20260301.1.json`), 'usage') as AnthropicWire.Usage)).toEqual(usage(2414, 3200, 0, 0, { webSearchCalls: 0 }));
  });

  it('cache writes keep their split by lifetime; a 1-hour part larger than the writes is cut to them', () => {
    // The recorded prompt-cache answer's message_start usage, with its writes moved to the 1-hour cache.
    const start = chunkLines(`${DIR}anthropic-code-execution-20260120-prompt-cache.1.chunks.txt`).map((l) => JSON.parse(l)).find((e) => at(e, 'type') === 'message_start');
    const recorded = at(start, 'message', 'usage') as AnthropicWire.Usage;
    expect(recorded).toMatchObject({ input_tokens: 2, cache_creation_input_tokens: 3068, cache_read_input_tokens: 0, cache_creation: { ephemeral_5m_input_tokens: 3068, ephemeral_1h_input_tokens: 0 } });
    expect(decodeUsage(recorded)).toEqual(usage(3070, 69, 0, 3068));
    expect(decodeUsage({ ...recorded, cache_creation: { ephemeral_5m_input_tokens: 68, ephemeral_1h_input_tokens: 3000 } })).toEqual(usage(3070, 69, 0, 3068, { cacheWrite1hTokens: 3000 }));
    expect(decodeUsage({ ...recorded, cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 9999 } })).toEqual(usage(3070, 69, 0, 3068, { cacheWrite1hTokens: 3068 }));
  });

  it('counts that are not whole non-negative numbers count as 0; thinking above the output is cut to it', () => {
    expect(decodeUsage({ input_tokens: -5, output_tokens: 10.7, cache_read_input_tokens: null, cache_creation_input_tokens: 4, output_tokens_details: { thinking_tokens: 50 } })).toEqual({
      inputTokens: 4,
      outputTokens: 10,
      cachedTokens: 0,
      cacheWriteTokens: 4,
      reasoningTokens: 10,
    });
  });
});

describe('decodeMessagesResponse', () => {
  it('text (anthropic-text.json)', () => {
    expect(decodeMessagesResponse(fixtureJson(`${DIR}anthropic-text.json`))).toEqual({
      id: 'msg_01VdEjxAP5ahtHKrrRdNBteQ',
      model: 'claude-sonnet-4-5-20250929',
      content: [{ type: 'text', text: "Hello! I'm doing well, thanks for asking. How are you doing today? Is there anything I can help you with?" }],
      finishReason: 'stop',
      stopSequence: null,
      usage: usage(12, 29),
      webSearch: false,
    });
  });

  it('signed thinking, then text (anthropic-clear-thinking.1.json)', () => {
    const body = fixtureJson<AnthropicWire.Message>(`${DIR}anthropic-clear-thinking.1.json`);
    expect(decodeMessagesResponse(body)).toEqual({
      id: 'msg_01XrsJCi8CQoLcnnWdY8RsJz',
      model: 'claude-sonnet-4-5-20250929',
      content: [
        { type: 'reasoning', text: '925 divided by 5 = 185', signature: atString(body, 'content', 0, 'signature') },
        { type: 'text', text: '925 ÷ 5 = 185' },
      ],
      finishReason: 'stop',
      stopSequence: null,
      usage: usage(69, 33),
      webSearch: false,
    });
  });

  it('text and a tool call without arguments (anthropic-tool-no-args.json)', () => {
    const body = fixtureJson<AnthropicWire.Message>(`${DIR}anthropic-tool-no-args.json`);
    expect(decodeMessagesResponse(body)).toEqual({
      id: 'msg_01GCBaV8gyWAYgMVggRqZbuQ',
      model: 'claude-3-opus-20240229',
      content: [
        { type: 'text', text: atString(body, 'content', 0, 'text') },
        { type: 'tool_call', id: 'toolu_01LRmxn9vGM1d2DZSDBowdZ1', name: 'updateIssueList', arguments: '{}' },
      ],
      finishReason: 'tool_calls',
      stopSequence: null,
      usage: usage(602, 93),
      webSearch: false,
    });
  });

  it('a client tool named "json" is an ordinary tool call (anthropic-json-tool.1.json)', () => {
    const body = fixtureJson<AnthropicWire.Message>(`${DIR}anthropic-json-tool.1.json`);
    expect(decodeMessagesResponse(body)).toEqual({
      id: 'msg_0191iYfpERYfS27xLsdW2nbb',
      model: 'claude-haiku-4-5-20251001',
      content: [{ type: 'tool_call', id: 'toolu_01Q9ExVZnzZj7E2QQYHYtNUa', name: 'json', arguments: JSON.stringify(at(body, 'content', 0, 'input')) }],
      finishReason: 'tool_calls',
      stopSequence: null,
      usage: usage(1151, 87),
      webSearch: false,
    });
  });

  it(`the gateway's forced ${JSON_TOOL} tool is the answer's JSON text and a normal stop (anthropic-json-tool.1.json, tool renamed)`, () => {
    const body = JSON.parse(renameTool(JSON.stringify(fixtureJson(`${DIR}anthropic-json-tool.1.json`)), 'json', JSON_TOOL));
    expect(decodeMessagesResponse(body)).toMatchObject({
      content: [{ type: 'text', text: JSON.stringify(at(body, 'content', 0, 'input')) }],
      finishReason: 'stop',
    });
  });

  it('web search: server tool blocks are dropped, cited text blocks carry their sources (anthropic-web-search-tool.1.json)', () => {
    const body = fixtureJson<AnthropicWire.Message>(`${DIR}anthropic-web-search-tool.1.json`);
    const text = (i: number) => atString(body, 'content', i, 'text');
    const cited = (i: number, url: string, title: string) => ({ type: 'text', text: text(i), annotations: [{ url, title, start: 0, end: text(i).length }] });
    const crescendo = ['https://www.crescendo.ai/news/latest-ai-news-and-updates', 'The Latest AI News and AI Breakthroughs that Matter Most: 2025 | News'] as const;
    expect(decodeMessagesResponse(body)).toEqual({
      id: 'msg_01PHHrjzLH4teUMhgkGgqYYc',
      model: 'claude-sonnet-4-20250514',
      content: [
        { type: 'text', text: text(2) },
        { type: 'text', text: text(5) },
        cited(6, 'https://acecomments.mu.nu/?post=411647', 'Daily Tech News 26 September 2024'),
        { type: 'text', text: text(7) },
        cited(8, ...crescendo),
        { type: 'text', text: '\n\n- ' },
        cited(10, ...crescendo),
        { type: 'text', text: text(11) },
      ],
      finishReason: 'stop',
      stopSequence: null,
      usage: usage(27118, 600, 0, 0, { webSearchCalls: 2 }),
      webSearch: true,
    });
  });

  it('code execution server tools are dropped and do not count as web search (anthropic-code-execution-20250825.1.json)', () => {
    const body = fixtureJson<AnthropicWire.Message>(`${DIR}anthropic-code-execution-20250825.1.json`);
    expect(decodeMessagesResponse(body)).toEqual({
      id: 'msg_01Wx5dv3Qisv7pjTdanFgc9Q',
      model: 'claude-sonnet-4-5-20250929',
      content: [0, 3, 6].map((i) => ({ type: 'text', text: atString(body, 'content', i, 'text') })),
      finishReason: 'stop',
      stopSequence: null,
      usage: usage(7881, 608, 0, 0, { webSearchCalls: 0 }),
      webSearch: false,
    });
  });
});

describe('MessagesStreamDecoder', () => {
  it('text stream with a ping; usage from message_delta (anthropic-text.chunks.txt)', () => {
    expect(decodeStream(new MessagesStreamDecoder(), chunkLines(`${DIR}anthropic-text.chunks.txt`))).toEqual([
      { type: 'start', id: 'msg_01QC4g3HwBThD4BaNtBckFDJ', model: 'claude-sonnet-4-5-20250929' },
      { type: 'text', text: 'Hello' },
      { type: 'text', text: '! I' },
      { type: 'text', text: "'m doing well, thank you for asking" },
      { type: 'text', text: '. How are you doing today?' },
      { type: 'text', text: ' Is' },
      { type: 'text', text: ' there anything I can help you with?' },
      { type: 'finish', reason: 'stop', stopSequence: null },
      { type: 'usage', usage: usage(12, 30) },
    ]);
  });

  it('text, then a tool call whose only input delta is empty (anthropic-tool-no-args.chunks.txt)', () => {
    const events = decodeStream(new MessagesStreamDecoder(), chunkLines(`${DIR}anthropic-tool-no-args.chunks.txt`));
    expect(events).toEqual([
      { type: 'start', id: 'msg_01GE2RKp1VYsPzdFs3sS9z5S', model: 'claude-sonnet-4-5-20250929' },
      { type: 'text', text: "I'll update the issue list for" },
      { type: 'text', text: ' you.' },
      { type: 'tool_call_start', index: 1, id: 'toolu_01QE1WLsSVp5hy5Q3GmGTmjP', name: 'updateIssueList' },
      { type: 'finish', reason: 'tool_calls', stopSequence: null },
      { type: 'usage', usage: usage(565, 48) },
    ]);
    expect(accumulate(events).content).toEqual([
      { type: 'text', text: "I'll update the issue list for you." },
      { type: 'tool_call', id: 'toolu_01QE1WLsSVp5hy5Q3GmGTmjP', name: 'updateIssueList', arguments: '{}', thoughtSignature: undefined },
    ]);
  });

  it('thinking deltas and the signature, then text (anthropic-clear-thinking.1.chunks.txt)', () => {
    const lines = chunkLines(`${DIR}anthropic-clear-thinking.1.chunks.txt`);
    const signature = atString(JSON.parse(lines.find((l) => l.includes('signature_delta'))!), 'delta', 'signature');
    const events = decodeStream(new MessagesStreamDecoder(), lines);
    expect(events).toEqual([
      { type: 'start', id: 'msg_01Y6V41gqPaKWEw7iPouH7iW', model: 'claude-sonnet-4-5-20250929' },
      ...['The previous', ' result', ' was', ' 925.', ' Now', ' I need to divide that', ' by 5.\n\n925', ' ÷ 5 ', '= 185', ''].map((text) => ({ type: 'reasoning', text })),
      { type: 'reasoning_signature', signature },
      { type: 'text', text: '925' },
      { type: 'text', text: ' ÷ 5 ' },
      { type: 'text', text: '= 185' },
      { type: 'finish', reason: 'stop', stopSequence: null },
      { type: 'usage', usage: usage(69, 53) },
    ]);
    expect(accumulate(events).content).toEqual([
      { type: 'reasoning', text: 'The previous result was 925. Now I need to divide that by 5.\n\n925 ÷ 5 = 185', signature },
      { type: 'text', text: '925 ÷ 5 = 185' },
    ]);
  });

  it(`the forced ${JSON_TOOL} tool streams as text and ends as a normal stop (anthropic-json-tool.1.chunks.txt, tool renamed)`, () => {
    const lines = chunkLines(`${DIR}anthropic-json-tool.1.chunks.txt`).map((l) => renameTool(l, 'json', JSON_TOOL));
    expect(decodeStream(new MessagesStreamDecoder(), lines)).toEqual([
      { type: 'start', id: 'msg_01K2JbSUMYhez5RHoK9ZCj9U', model: 'claude-haiku-4-5-20251001' },
      { type: 'text', text: '{"elements": [{"location": "San Francisco", "temperature": 58, "condition": "sunny"}]' },
      { type: 'text', text: '}' },
      { type: 'finish', reason: 'stop', stopSequence: null },
      { type: 'usage', usage: usage(849, 47) },
    ]);
  });

  it('prompt caching: message_delta usage is cumulative and replaces message_start (code execution with cache, 20260120)', () => {
    const events = decodeStream(new MessagesStreamDecoder(), chunkLines(`${DIR}anthropic-code-execution-20260120-prompt-cache.1.chunks.txt`));
    // The split by lifetime comes from message_start (3068 written, all for 5 minutes), the counts from message_delta.
    expect(events.filter((e) => e.type === 'usage')).toEqual([{ type: 'usage', usage: usage(9632, 198, 6289, 3337, { webSearchCalls: 0 }) }]);
    const { content, finishReason, webSearch } = accumulate(events);
    expect({ content, finishReason, webSearch }).toEqual({
      content: [{ type: 'text', text: 'The sum of the squares of the numbers 1 through 12 is **650**.' }],
      finishReason: 'stop',
      webSearch: false,
    });
  });

  it("compaction in a stream: message_delta's iterations add the compaction step to the answering step's counts (anthropic-compaction.1.chunks.txt: 612 + 60385 in, 2819 + 522 out)", () => {
    const events = decodeStream(new MessagesStreamDecoder(), chunkLines(`${DIR}anthropic-compaction.1.chunks.txt`));
    expect(events.filter((e) => e.type === 'usage')).toEqual([{ type: 'usage', usage: usage(612 + 60385, 2819 + 522, 0, 0, { webSearchCalls: 0 }) }]);
  });

  it("an advisor's step in a stream stays out: the executor's steps are the top-level counts (anthropic-advisor-20250301.1.chunks.txt: 1051 + 3676 in, 35 + 3356 out)", () => {
    const events = decodeStream(new MessagesStreamDecoder(), chunkLines(`${DIR}anthropic-advisor-20250301.1.chunks.txt`));
    expect(events.filter((e) => e.type === 'usage')).toEqual([{ type: 'usage', usage: usage(4727, 3391, 0, 0, { webSearchCalls: 0 }) }]);
  });

  it('web search: the server tool call is not a client tool call; its text and final usage (anthropic-web-search-tool.1.chunks.txt)', () => {
    const lines = chunkLines(`${DIR}anthropic-web-search-tool.1.chunks.txt`);
    const text = lines.map((l) => at(JSON.parse(l), 'delta')).filter((d) => at(d, 'type') === 'text_delta').map((d) => atString(d, 'text')).join('');
    const events = decodeStream(new MessagesStreamDecoder(), lines);
    expect(events.filter((e) => e.type.startsWith('tool_call'))).toEqual([]);
    expect(events.filter((e) => e.type === 'web_search')).toEqual([{ type: 'web_search' }]);
    expect(joined(events, 'text')).toBe(text);
    expect(events.slice(-2)).toEqual([
      { type: 'finish', reason: 'stop', stopSequence: null },
      { type: 'usage', usage: usage(15665, 795, 0, 0, { webSearchCalls: 1 }) },
    ]);
    // The citation spans are not asserted here: see the report (citations_delta arrive before their block's text).
  });

  it("an error event is the upstream's failure (the shape Anthropic documents; no recording exists)", () => {
    const decoder = new MessagesStreamDecoder();
    decoder.push({ data: chunkLines(`${DIR}anthropic-text.chunks.txt`)[0]! });
    const err = thrownBy(() => decoder.push({ data: '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}' }));
    expect(err).toBeInstanceOf(UpstreamStreamError);
    expect(err).toMatchObject({ message: 'Overloaded', upstreamType: 'overloaded_error', detail: { type: 'overloaded_error', message: 'Overloaded' } });
  });

  it('a stream that ends before message_stop was cut', () => {
    const decoder = new MessagesStreamDecoder();
    for (const data of chunkLines(`${DIR}anthropic-text.chunks.txt`).slice(0, -1)) decoder.push({ data });
    expect(() => decoder.end()).toThrow(new UpstreamStreamError('the upstream stream ended before message_stop'));
  });
});

describe('thinksAdaptively and toolId', () => {
  it.each([
    ['claude-opus-4-7', true],
    ['claude-opus-4-6', true],
    ['claude-sonnet-4.6', true],
    ['claude-opus-5', true],
    ['claude-sonnet-4-5-20250929', false],
    ['claude-sonnet-4-20250514', false],
    ['claude-haiku-4-5-20251001', false],
    ['claude-3-opus-20240229', false],
  ] as const)('%s thinks adaptively: %s', (model, expected) => {
    expect(thinksAdaptively(model)).toBe(expected);
  });

  it("maps other providers' tool ids onto Anthropic's character set", () => {
    expect(toolId('toolu_01QE1WLsSVp5hy5Q3GmGTmjP')).toBe('toolu_01QE1WLsSVp5hy5Q3GmGTmjP');
    expect(toolId('call.1:x/y')).toBe('call_1_x_y');
  });
});

describe('encodeMessagesBody', () => {
  const schema = { type: 'object', properties: { answer: { type: 'string' } } };
  const weather = { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } };
  const hi: C.Message[] = [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }];
  const hiWire = [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }];

  it('every field in its Messages place; thinking goes back only signed or redacted; tool results open the user turn', () => {
    const req = request({
      model: 'claude-sonnet-4-5',
      system: ['Be terse.', 'Use metric units.'],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Weather?' }, { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'iVBOR' } }, { type: 'text', text: '' }] },
        {
          role: 'assistant',
          content: [
            { type: 'reasoning', text: 'unsigned, from another provider' },
            { type: 'reasoning', text: 'signed', signature: 'sig1' },
            { type: 'reasoning', text: '', redactedData: 'red' },
            { type: 'text', text: 'Checking.' },
            { type: 'tool_call', id: 'call.1:x', name: 'get_weather', arguments: '{"city":"Paris"}' },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'also' },
            { type: 'tool_result', toolCallId: 'call.1:x', content: [{ type: 'text', text: '21C' }, { type: 'image', source: { kind: 'url', url: 'https://example.com/sky.png' } }], isError: true },
          ],
        },
        { role: 'system', content: [{ type: 'text', text: 'Be brief.' }] },
        { role: 'assistant', content: [{ type: 'reasoning', text: 'nothing to send back' }] },
        { role: 'user', content: [{ type: 'text', text: 'thanks' }] },
      ],
      tools: [weather],
      toolChoice: 'required',
      parallelToolCalls: false,
      maxTokens: 100,
      temperature: 1.5,
      topP: 0.9,
      topK: 40,
      stop: ['END'],
      user: 'user-1',
      stream: true,
    });
    expect(encodeMessagesBody(req, callContext('anthropic'))).toEqual({
      model: 'claude-sonnet-4-5',
      system: 'Be terse.\n\nUse metric units.',
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Weather?' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBOR' } }] },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'signed', signature: 'sig1' },
            { type: 'redacted_thinking', data: 'red' },
            { type: 'text', text: 'Checking.' },
            { type: 'tool_use', id: 'call_1_x', name: 'get_weather', input: { city: 'Paris' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'call_1_x', content: [{ type: 'text', text: '21C' }, { type: 'image', source: { type: 'url', url: 'https://example.com/sky.png' } }], is_error: true },
            { type: 'text', text: 'also' },
          ],
        },
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'text', text: 'thanks' }] },
      ],
      tools: [{ name: 'get_weather', description: 'Weather', input_schema: weather.parameters }],
      tool_choice: { type: 'any', disable_parallel_tool_use: true },
      max_tokens: 100,
      temperature: 1,
      top_p: 0.9,
      top_k: 40,
      stop_sequences: ['END'],
      metadata: { user_id: 'user-1' },
      stream: true,
    });
  });

  it('a thinking budget on a model with fixed budgets: enabled thinking, budget added to max_tokens, no temperature or top_k', () => {
    const req = request({ model: 'claude-sonnet-4-5-20250929', messages: hi, reasoning: { effort: 'medium' }, temperature: 0.5, topK: 10, topP: 0.8 });
    expect(encodeMessagesBody(req, callContext('anthropic', 2000))).toEqual({
      model: 'claude-sonnet-4-5-20250929',
      messages: hiWire,
      thinking: { type: 'enabled', budget_tokens: 8192 },
      max_tokens: 8192 + 2000,
      top_p: 0.8,
    });
    expect(encodeMessagesBody(request({ model: 'claude-sonnet-4-5', messages: hi, reasoning: { budgetTokens: 500 } }), callContext('anthropic'))).toEqual({
      model: 'claude-sonnet-4-5',
      messages: hiWire,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      max_tokens: 1024 + DEFAULT_MAX_TOKENS,
    });
  });

  it('adaptive thinking on Claude 4.6+: an effort (minimal → low, a budget → its effort) instead of a budget', () => {
    expect(encodeMessagesBody(request({ model: 'claude-opus-4-7', messages: hi, reasoning: { effort: 'minimal' } }), callContext('anthropic'))).toEqual({
      model: 'claude-opus-4-7',
      messages: hiWire,
      thinking: { type: 'adaptive' },
      output_config: { effort: 'low' },
      max_tokens: DEFAULT_MAX_TOKENS,
    });
    expect(encodeMessagesBody(request({ model: 'claude-opus-4-7', messages: hi, reasoning: { budgetTokens: 20000 } }), callContext('anthropic'))).toMatchObject({
      thinking: { type: 'adaptive' },
      output_config: { effort: 'high' },
    });
  });

  it('structured output without tools is a forced json_response tool, which turns thinking off', () => {
    const req = request({ model: 'claude-sonnet-4-5', messages: hi, responseFormat: { type: 'json_schema', name: 'answer', schema }, reasoning: { effort: 'high' }, temperature: 0.3 });
    expect(encodeMessagesBody(req, callContext('anthropic'))).toEqual({
      model: 'claude-sonnet-4-5',
      messages: hiWire,
      tools: [{ name: JSON_TOOL, description: 'Respond with the JSON output.', input_schema: schema }],
      tool_choice: { type: 'tool', name: JSON_TOOL },
      max_tokens: DEFAULT_MAX_TOKENS,
      temperature: 0.3,
    });
  });

  it('structured output beside client tools is asked for in the system prompt; web search is the server tool', () => {
    const req = request({ model: 'claude-sonnet-4-5', system: ['Be terse.'], messages: hi, tools: [weather], responseFormat: { type: 'json_object' }, webSearch: true });
    expect(encodeMessagesBody(req, callContext('anthropic'))).toEqual({
      model: 'claude-sonnet-4-5',
      messages: hiWire,
      system: 'Be terse.\n\nAnswer with a single JSON value only, matching this JSON Schema:\n{"type":"object"}',
      tools: [
        { name: 'get_weather', description: 'Weather', input_schema: weather.parameters },
        { type: 'web_search_20250305', name: 'web_search', max_uses: 5 },
      ],
      max_tokens: DEFAULT_MAX_TOKENS,
    });
  });

  it('tool_choice none without tools, a named tool, and effort none (no thinking)', () => {
    expect(encodeMessagesBody(request({ messages: hi, toolChoice: 'none', reasoning: { effort: 'none' } }), callContext('anthropic'))).toEqual({
      model: 'up-model',
      messages: hiWire,
      tool_choice: { type: 'none' },
      max_tokens: DEFAULT_MAX_TOKENS,
    });
    expect(encodeMessagesBody(request({ messages: hi, tools: [weather], toolChoice: { name: 'get_weather' } }), callContext('anthropic'))).toMatchObject({ tool_choice: { type: 'tool', name: 'get_weather' } });
  });

  it('refuses an image type Anthropic cannot read', () => {
    const req = request({ messages: [{ role: 'user', content: [{ type: 'image', source: { kind: 'base64', mediaType: 'image/bmp', data: 'Qk0=' } }] }] });
    expect(() => encodeMessagesBody(req, callContext('anthropic'))).toThrow(UnsupportedContentError);
  });

  it("cache breakpoints go where the client set them: system blocks, tools, text, images, tool results, the request (Anthropic's cache_control)", () => {
    const mark = { type: 'ephemeral' as const };
    const hour = { type: 'ephemeral' as const, ttl: '1h' };
    const body = encodeMessagesBody(
      request({
        model: 'claude-sonnet-4-5',
        system: ['Long instructions.', '', 'Today is Monday.'],
        systemCacheControl: [hour, undefined, undefined],
        cacheControl: mark,
        tools: [{ ...weather, cacheControl: mark }],
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'Weather?', cacheControl: mark }, { type: 'image', source: { kind: 'url', url: 'https://example.com/sky.png' }, cacheControl: mark }] },
          { role: 'assistant', content: [{ type: 'tool_call', id: 'c1', name: 'get_weather', arguments: '{"city":"Paris"}' }] },
          { role: 'user', content: [{ type: 'tool_result', toolCallId: 'c1', content: [{ type: 'text', text: '21C', cacheControl: hour }], cacheControl: mark }] },
        ],
      }),
      callContext('anthropic'),
    );
    expect(body).toEqual({
      model: 'claude-sonnet-4-5',
      // One block per entry once one carries a mark (the empty entry left out: Anthropic refuses empty blocks).
      system: [{ type: 'text', text: 'Long instructions.', cache_control: hour }, { type: 'text', text: 'Today is Monday.' }],
      cache_control: mark,
      tools: [{ name: 'get_weather', description: 'Weather', input_schema: weather.parameters, cache_control: mark }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Weather?', cache_control: mark }, { type: 'image', source: { type: 'url', url: 'https://example.com/sky.png' }, cache_control: mark }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'c1', name: 'get_weather', input: { city: 'Paris' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c1', content: [{ type: 'text', text: '21C', cache_control: hour }], cache_control: mark }] },
      ],
      max_tokens: DEFAULT_MAX_TOKENS,
    });
  });

  it('with marked system blocks, the JSON instruction for tools plus a schema is one more block', () => {
    const body = encodeMessagesBody(
      request({ system: ['Cached.'], systemCacheControl: [{ type: 'ephemeral' }], tools: [weather], messages: hi, responseFormat: { type: 'json_schema', name: 'out', schema } }),
      callContext('anthropic'),
    );
    expect(body.system).toEqual([
      { type: 'text', text: 'Cached.', cache_control: { type: 'ephemeral' } },
      { type: 'text', text: `Answer with a single JSON value only, matching this JSON Schema:\n${JSON.stringify(schema)}` },
    ]);
  });
});
