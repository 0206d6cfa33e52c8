// server/providers/openai/chat.ts: canonical request → chat-completions body, and OpenAI's (and
// OpenAI-compatible servers') answers and chunks → canonical, from recorded answers.
import { describe, expect, it } from 'vitest';
import { ChatStreamDecoder, decodeChatResponse, decodeUsage, encodeChatBody, mapFinish } from '../../server/providers/openai/chat.ts';
import { UpstreamStreamError } from '../../server/upstream/errors.ts';
import type * as C from '../../server/translate/canonical.ts';
import { VERCEL, accumulate, at, atString, callContext, chunkLines, decodeStream, fixtureJson, request, thrownBy } from './fixtures.ts';
import type * as OpenAIWire from '../../server/providers/openai/wire.ts';

const CHAT = `${VERCEL}openai/src/chat/__fixtures__/`;
const XAI = `${VERCEL}openai-compatible/src/chat/__fixtures__/`;
/** OpenAI reports audio input and output in every usage's details (0 in these recordings): the parts are known. */
const AUDIO_KNOWN = { audioInputTokens: 0, audioOutputTokens: 0 };
const usage = (inputTokens: number, outputTokens: number, cachedTokens = 0, reasoningTokens = 0, parts: Partial<C.Usage> = AUDIO_KNOWN): C.Usage => ({
  inputTokens,
  outputTokens,
  cachedTokens,
  cacheWriteTokens: 0,
  reasoningTokens,
  ...parts,
});
/** A recorded stream's payloads; the recorder stripped the terminating `[DONE]`, which the wire had. */
const stream = (rel: string) => [...chunkLines(rel), '[DONE]'];

describe('mapFinish (OpenAI finish_reason → canonical)', () => {
  it.each([
    ['stop', 'stop'],
    ['length', 'length'],
    ['tool_calls', 'tool_calls'],
    ['function_call', 'tool_calls'],
    ['content_filter', 'content_filter'],
    [null, 'stop'],
    [undefined, 'stop'],
  ] as const)('%s → %s', (reason, expected) => {
    expect(mapFinish(reason)).toBe(expected);
  });
});

describe('decodeUsage', () => {
  it("reads OpenAI's usage object as recorded (completion tokens include reasoning)", () => {
    expect(decodeUsage(at(fixtureJson(`${CHAT}openai-text.json`), 'usage') as Record<string, unknown>)).toEqual(usage(16, 363));
  });

  it('reads cached and reasoning tokens from the details (Azure OpenAI stream usage chunk: 15 in, 78 out of which 64 reasoning)', () => {
    const last = chunkLines(`${CHAT}azure-model-router.1.chunks.txt`).at(-1)!;
    expect(decodeUsage(at(JSON.parse(last), 'usage') as Record<string, unknown>)).toEqual(usage(15, 78, 0, 64));
  });

  it('is null when the answer has none', () => {
    expect(decodeUsage(null)).toBeNull();
    expect(decodeUsage(undefined)).toBeNull();
  });

  it("xAI leaves reasoning out of completion_tokens and bills it: its total_tokens says so, and the output adds it (xai-text.json: 12 + 2 + 320 = 334)", () => {
    const u = at(fixtureJson(`${XAI}xai-text.json`), 'usage');
    expect(u).toMatchObject({ prompt_tokens: 12, completion_tokens: 2, total_tokens: 334, completion_tokens_details: { reasoning_tokens: 320 } });
    expect(decodeUsage(u as OpenAIWire.ChatUsage)).toEqual(usage(12, 322, 2, 320, { ...AUDIO_KNOWN, imageInputTokens: 0 }));
  });

  it('xAI tool call: 307 in of which 244 cached, 26 + 255 reasoning out (xai-tool-call.json)', () => {
    expect(decodeUsage(at(fixtureJson(`${XAI}xai-tool-call.json`), 'usage') as OpenAIWire.ChatUsage)).toEqual(usage(307, 281, 244, 255, { ...AUDIO_KNOWN, imageInputTokens: 0 }));
  });

  it("OpenRouter's extras: cache writes, video as image input, image output, its server tools' searches (shape of OpenRouter's OpenAPI ChatUsage; no recording has them)", () => {
    const u: OpenAIWire.ChatUsage = {
      prompt_tokens: 1200,
      completion_tokens: 300,
      total_tokens: 1500,
      prompt_tokens_details: { cached_tokens: 800, cache_write_tokens: 300, audio_tokens: null, video_tokens: 40 },
      completion_tokens_details: { reasoning_tokens: 100, image_tokens: 120, audio_tokens: null, accepted_prediction_tokens: null, rejected_prediction_tokens: null },
      server_tool_use_details: { web_search_requests: 2 },
    };
    expect(decodeUsage(u)).toEqual({ inputTokens: 1200, outputTokens: 300, cachedTokens: 800, cacheWriteTokens: 300, reasoningTokens: 100, imageInputTokens: 40, imageOutputTokens: 120, webSearchCalls: 2 });
  });

  it("predicted-output tokens are inside completion_tokens (OpenAI's spec): no part of their own", () => {
    const u: OpenAIWire.ChatUsage = { prompt_tokens: 16, completion_tokens: 363, total_tokens: 379, completion_tokens_details: { reasoning_tokens: 0, accepted_prediction_tokens: 200, rejected_prediction_tokens: 50 } };
    expect(decodeUsage(u)).toEqual({ inputTokens: 16, outputTokens: 363, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 });
  });

  it('a part larger than its total is cut to it: cached above the prompt, writes beyond what reads leave', () => {
    const u: OpenAIWire.ChatUsage = { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110, prompt_tokens_details: { cached_tokens: 150, cache_write_tokens: 20, audio_tokens: 120 } };
    expect(decodeUsage(u)).toEqual({ inputTokens: 100, outputTokens: 10, cachedTokens: 100, cacheWriteTokens: 0, reasoningTokens: 0, audioInputTokens: 100 });
  });
});

describe('decodeChatResponse', () => {
  it('OpenAI text answer (openai-text.json)', () => {
    const body = fixtureJson<OpenAIWire.ChatCompletion>(`${CHAT}openai-text.json`);
    expect(decodeChatResponse(body)).toEqual({
      id: 'chatcmpl-D8Z5f52zQqikDBEKQMQoYcWMcWPeU',
      model: 'gpt-4.1-nano-2025-04-14',
      content: [{ type: 'text', text: atString(body, 'choices', 0, 'message', 'content') }],
      finishReason: 'stop',
      usage: usage(16, 363),
    });
  });

  it('OpenAI-compatible answer with reasoning_content and a tool call, content "" (xAI grok-3-mini, xai-tool-call.json)', () => {
    const body = fixtureJson<OpenAIWire.ChatCompletion>(`${XAI}xai-tool-call.json`);
    // xAI's completion_tokens exclude the reasoning it bills: the output adds it back (decodeUsage).
    expect(decodeChatResponse(body)).toEqual({
      id: 'acfa24c3-b556-0f2c-731e-64fb836d544b',
      model: 'grok-3-mini',
      content: [
        { type: 'reasoning', text: atString(body, 'choices', 0, 'message', 'reasoning_content') },
        { type: 'tool_call', id: 'call_46427107', name: 'weather', arguments: '{"location":"San Francisco"}' },
      ],
      finishReason: 'tool_calls',
      usage: usage(307, 281, 244, 255, { ...AUDIO_KNOWN, imageInputTokens: 0 }),
    });
  });
});

describe('ChatStreamDecoder', () => {
  it('OpenAI text stream with the include_usage chunk (openai-text.chunks.txt)', () => {
    const lines = chunkLines(`${CHAT}openai-text.chunks.txt`);
    const deltas = lines.map((l) => at(JSON.parse(l), 'choices', 0, 'delta', 'content')).filter((t): t is string => typeof t === 'string' && t !== '');
    expect(deltas).toHaveLength(300);
    expect(decodeStream(new ChatStreamDecoder(), stream(`${CHAT}openai-text.chunks.txt`))).toEqual([
      { type: 'start', id: 'chatcmpl-D8Z5oo6uDh67AD85p73ksdT1KxhE0', model: 'gpt-4.1-nano-2025-04-14' },
      ...deltas.map((text) => ({ type: 'text', text })),
      { type: 'finish', reason: 'stop' },
      { type: 'usage', usage: usage(16, 300) },
    ]);
  });

  it('Azure OpenAI stream: content-filter results, reasoning tokens in the usage chunk (azure-model-router.1.chunks.txt)', () => {
    const events = decodeStream(new ChatStreamDecoder(), stream(`${CHAT}azure-model-router.1.chunks.txt`));
    // events[0] (start) left out: Azure's first chunk is a prompt_filter_results chunk with id "" and model "" (reported).
    expect(events.slice(1)).toEqual([
      { type: 'text', text: 'Capital' },
      { type: 'text', text: ' of' },
      { type: 'text', text: ' Denmark' },
      { type: 'text', text: '.' },
      { type: 'finish', reason: 'stop' },
      { type: 'usage', usage: usage(15, 78, 0, 64) },
    ]);
  });

  it('OpenAI-compatible stream with reasoning deltas and a whole tool call in one chunk (xai-tool-call.chunks.txt)', () => {
    const lines = chunkLines(`${XAI}xai-tool-call.chunks.txt`);
    const reasoning = lines.map((l) => at(JSON.parse(l), 'choices', 0, 'delta', 'reasoning_content')).filter((t): t is string => typeof t === 'string');
    const events = decodeStream(new ChatStreamDecoder(), stream(`${XAI}xai-tool-call.chunks.txt`));
    expect(events.filter((e) => e.type !== 'usage')).toEqual([
      { type: 'start', id: '7027d986-3c59-a37a-9a5f-50713e01c8a6', model: 'grok-3-mini' },
      ...reasoning.map((text) => ({ type: 'reasoning', text })),
      { type: 'tool_call_start', index: 0, id: 'call_79382389', name: 'weather' },
      { type: 'tool_call_delta', index: 0, arguments: '{"location":"San Francisco"}' },
      { type: 'finish', reason: 'tool_calls' },
    ]);
    // The usage chunk: 307 in (306 cached), 26 + 227 reasoning out (total_tokens 560).
    expect(events.filter((e) => e.type === 'usage')).toEqual([{ type: 'usage', usage: usage(307, 253, 306, 227, { ...AUDIO_KNOWN, imageInputTokens: 0 }) }]);
    const { usage: _usage, ...response } = accumulate(events);
    expect(response).toEqual({
      id: '7027d986-3c59-a37a-9a5f-50713e01c8a6',
      model: 'grok-3-mini',
      content: [
        { type: 'reasoning', text: reasoning.join('') },
        { type: 'tool_call', id: 'call_79382389', name: 'weather', arguments: '{"location":"San Francisco"}', thoughtSignature: undefined },
      ],
      finishReason: 'tool_calls',
      stopSequence: null,
      webSearch: false,
      failure: null,
    });
  });

  it("an error object in the stream is the upstream's failure (OpenAI's recorded error envelope)", () => {
    const error = fixtureJson(`${CHAT}reasoning-model-legacy-parameter-error.json`);
    const decoder = new ChatStreamDecoder();
    const thrown = thrownBy(() => decoder.push({ data: JSON.stringify(error) }));
    expect(thrown).toBeInstanceOf(UpstreamStreamError);
    expect(thrown).toMatchObject({
      message: "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
      upstreamType: 'invalid_request_error',
      detail: at(error, 'error'),
    });
  });

  it('a stream that ends before [DONE] was cut', () => {
    const decoder = new ChatStreamDecoder();
    for (const data of chunkLines(`${CHAT}openai-text.chunks.txt`)) decoder.push({ data });
    expect(() => decoder.end()).toThrow(new UpstreamStreamError('the upstream stream ended before [DONE]'));
  });
});

describe('encodeChatBody', () => {
  const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] };
  const weather = { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } };
  const conversation: C.Message[] = [
    { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }, { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'iVBOR' }, detail: 'low' }] },
    {
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'The user wants weather.', signature: 'sig' },
        { type: 'text', text: 'Checking.' },
        { type: 'tool_call', id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
      ],
    },
    {
      role: 'user',
      content: [
        { type: 'tool_result', toolCallId: 'call_1', content: [{ type: 'text', text: '21C' }, { type: 'image', source: { kind: 'url', url: 'https://example.com/sky.png' } }] },
        { type: 'text', text: 'And tomorrow?' },
      ],
    },
    { role: 'system', content: [{ type: 'text', text: 'Be brief.' }] },
    { role: 'assistant', content: [{ type: 'tool_call', id: 'call_2', name: 'get_weather', arguments: '' }] },
    { role: 'user', content: [{ type: 'tool_result', toolCallId: 'call_2', content: [{ type: 'text', text: 'no data' }], isError: true }] },
  ];

  it('OpenAI: every field in its chat-completions place', () => {
    const req = request({
      model: 'gpt-test',
      system: ['You are terse.', 'Answer in French.'],
      messages: conversation,
      tools: [weather],
      toolChoice: { name: 'get_weather' },
      parallelToolCalls: false,
      maxTokens: 100,
      temperature: 0.2,
      topP: 0.9,
      topK: 40,
      seed: 7,
      frequencyPenalty: 0.1,
      presencePenalty: 0.2,
      stop: ['a', 'b', 'c', 'd', 'e'],
      reasoning: { budgetTokens: 5000 },
      responseFormat: { type: 'json_schema', name: 'answer', schema, strict: true, description: 'An answer' },
      stream: true,
    });
    expect(encodeChatBody(req, callContext('openai'))).toEqual({
      model: 'gpt-test',
      messages: [
        { role: 'system', content: 'You are terse.\n\nAnswer in French.' },
        { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBOR', detail: 'low' } }] },
        { role: 'assistant', content: 'Checking.', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: '21C' },
        { role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/sky.png' } }, { type: 'text', text: 'And tomorrow?' }] },
        { role: 'system', content: 'Be brief.' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'call_2', content: 'Error: no data' },
      ],
      max_completion_tokens: 100,
      temperature: 0.2,
      top_p: 0.9,
      seed: 7,
      frequency_penalty: 0.1,
      presence_penalty: 0.2,
      stop: ['a', 'b', 'c', 'd'],
      tools: [{ type: 'function', function: weather }],
      parallel_tool_calls: false,
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      reasoning_effort: 'medium',
      response_format: { type: 'json_schema', json_schema: { name: 'answer', schema, strict: true, description: 'An answer' } },
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it('OpenAI-compatible: max_tokens, top_k, mid-conversation system text folded into the user turn, max effort as xhigh', () => {
    const req = request({
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
        { role: 'system', content: [{ type: 'text', text: 'Be brief.' }] },
        { role: 'assistant', content: [] },
      ],
      maxTokens: 50,
      topK: 5,
      reasoning: { effort: 'max' },
      responseFormat: { type: 'json_object' },
    });
    expect(encodeChatBody(req, callContext('openai-compatible'))).toEqual({
      model: 'up-model',
      messages: [
        { role: 'user', content: 'Hi\n<system>\nBe brief.\n</system>' },
        { role: 'assistant', content: '' },
      ],
      max_tokens: 50,
      top_k: 5,
      reasoning_effort: 'xhigh',
      response_format: { type: 'json_object' },
    });
  });

  it('tool_choice is sent with tools, or alone when it is none', () => {
    const user: C.Message[] = [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }];
    expect(encodeChatBody(request({ messages: user, toolChoice: 'none' }), callContext('openai'))).toEqual({ model: 'up-model', messages: [{ role: 'user', content: 'Hi' }], tool_choice: 'none' });
    expect(encodeChatBody(request({ messages: user, toolChoice: 'required' }), callContext('openai'))).toEqual({ model: 'up-model', messages: [{ role: 'user', content: 'Hi' }] });
    expect(encodeChatBody(request({ messages: user, tools: [weather], toolChoice: 'required', reasoning: { effort: 'none' } }), callContext('openai'))).toEqual({
      model: 'up-model',
      messages: [{ role: 'user', content: 'Hi' }],
      tools: [{ type: 'function', function: weather }],
      tool_choice: 'required',
      reasoning_effort: 'none',
    });
  });
});
