// server/translate/messages.ts: the Messages client format. Requests (one recorded from Claude
// Code) → canonical; canonical responses decoded from recorded upstream answers → Messages bodies
// and SSE events.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MessagesRequest } from '../../contract/messages.ts';
import { MessagesStreamDecoder } from '../../server/providers/anthropic/messages.ts';
import { GenerateContentStreamDecoder, decodeGenerateContentResponse } from '../../server/providers/gemini/generate-content.ts';
import { decodeChatResponse } from '../../server/providers/openai/chat.ts';
import { MESSAGES_FIELDS } from '../../server/translate/request-fields.ts';
import { MessagesStreamEncoder, canonicalToMessages, messagesStop, messagesToCanonical, messagesUsage } from '../../server/translate/messages.ts';
import type * as C from '../../server/translate/canonical.ts';
import { VERCEL, at, atString, chunkLines, decodeStream, fixtureJson, namedEvents } from './fixtures.ts';
import type * as OpenAIWire from '../../server/providers/openai/wire.ts';
import type * as GeminiWire from '../../server/providers/gemini/wire.ts';

const msgId = expect.stringMatching(/^msg_[0-9A-Za-z]{24}$/);
const text = (t: string): C.TextPart => ({ type: 'text', text: t });
const parse = (body: Record<string, unknown>) => MessagesRequest.parse({ model: 'client-model', max_tokens: 1000, ...body });
const hi = [{ role: 'user', content: 'Hi' }];

describe('messagesToCanonical', () => {
  it("Claude Code's second turn as recorded: mid-conversation system message, tool search results, deferred tools it loaded", () => {
    const recorded = JSON.parse(readFileSync(new URL('../fixtures/claude-code/turn-2-after-tool-search.json', import.meta.url), 'utf8')) as unknown;
    const body = MessagesRequest.parse(at(recorded, 'body'));
    const { request, nativeOnly } = messagesToCanonical(body);
    const raw = at(recorded, 'body');
    const referenced = ['CronCreate', 'CronDelete', 'CronList', 'EnterWorktree', 'ExitWorktree', 'Monitor', 'NotebookEdit', 'SendMessage', 'TaskStop', 'WebFetch', 'WebSearch'];
    const tools = (at(raw, 'tools') as unknown[]).filter((t) => at(t, 'name') !== 'DeferredToolPlaceholder');
    expect(nativeOnly).toBeNull();
    expect(request).toEqual({
      model: 'gpt-4o-mini',
      system: [0, 1, 2].map((i) => atString(raw, 'system', i, 'text')),
      // Claude Code's cache breakpoints: on its last two system blocks and on the latest tool result.
      systemCacheControl: [undefined, { type: 'ephemeral' }, { type: 'ephemeral' }],
      messages: [
        { role: 'user', content: [0, 1, 2].map((i) => text(atString(raw, 'messages', 0, 'content', i, 'text'))) },
        { role: 'system', content: [text(atString(raw, 'messages', 1, 'content'))] },
        { role: 'assistant', content: [{ type: 'tool_call', id: 'toolu_00', name: 'ToolSearch', arguments: JSON.stringify(at(raw, 'messages', 2, 'content', 0, 'input')) }] },
        { role: 'user', content: [{ type: 'tool_result', toolCallId: 'toolu_00', name: 'ToolSearch', content: referenced.map((n) => text(`Tool loaded: ${n}`)), cacheControl: { type: 'ephemeral' } }] },
      ],
      tools: tools.map((t) => ({ name: at(t, 'name'), description: at(t, 'description'), parameters: at(t, 'input_schema') })),
      maxTokens: 32000,
      reasoning: { effort: 'high', adaptive: true },
      stream: true,
      user: atString(raw, 'metadata', 'user_id'),
      // Claude Code's user id holds its session id: the conversation's cache affinity.
      affinityHint: `user:${atString(raw, 'metadata', 'user_id')}`,
      webSearch: false,
      untranslated: ['context_management'],
    });
    expect(tools).toHaveLength(22);
  });

  it('cache breakpoints on the request, tools, text and image blocks and inside tool results are read (to be named where dropped)', () => {
    const mark = { type: 'ephemeral' as const };
    const { request } = messagesToCanonical(
      parse({
        cache_control: mark,
        system: [{ type: 'text', text: 'Sys', cache_control: { type: 'ephemeral', ttl: '1h' } }],
        tools: [{ name: 'f', input_schema: { type: 'object' }, cache_control: mark }],
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'See', cache_control: mark }, { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' }, cache_control: mark }] },
          { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'f', input: {} }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'ok', cache_control: mark }] }] },
        ],
      }),
    );
    expect(request).toMatchObject({ cacheControl: mark, systemCacheControl: [{ type: 'ephemeral', ttl: '1h' }], tools: [{ name: 'f', cacheControl: mark }] });
    expect(request.messages[0]!.content).toEqual([
      { type: 'text', text: 'See', cacheControl: mark },
      { type: 'image', source: { kind: 'url', url: 'https://example.com/a.png' }, cacheControl: mark },
    ]);
    expect(request.messages[2]!.content).toEqual([{ type: 'tool_result', toolCallId: 't1', name: 'f', content: [{ type: 'text', text: 'ok', cacheControl: mark }], isError: undefined }]);
  });

  it('every other field and block in its canonical place; a block only Anthropic takes makes the request native-only', () => {
    const schema = { type: 'object', properties: { answer: { type: 'string' } } };
    const parameters = { type: 'object', properties: { city: { type: 'string' } } };
    const body = parse({
      system: 'Be terse.',
      messages: [
        { role: 'system', content: [{ type: 'text', text: 'Before.' }] },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'See' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBOR' } },
            { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'T', signature: 's1' },
            { type: 'redacted_thinking', data: 'r' },
            { type: 'text', text: 'Ok' },
            { type: 'thinking', thinking: '', signature: 'gsig' },
            { type: 'tool_use', id: 't1', name: 'get_weather', input: { city: 'Paris' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 't1', content: '21C', is_error: true },
            {
              type: 'tool_result',
              tool_use_id: 't1',
              content: [
                { type: 'text', text: 'a' },
                { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: '/9j/' } },
                { type: 'search_result', source: 'https://example.com', title: 'x', content: [] },
              ],
            },
          ],
        },
        { role: 'system', content: 'Mid.' },
        { role: 'user', content: [{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'doc' } }] },
      ],
      tools: [
        { name: 'get_weather', description: 'Weather', input_schema: parameters },
        { name: 'deferred_one', input_schema: parameters, defer_loading: true },
        { type: 'web_search_20250305', name: 'web_search' },
      ],
      tool_choice: { type: 'any', disable_parallel_tool_use: true },
      temperature: 0.5,
      top_p: 0.9,
      top_k: 5,
      stop_sequences: ['END'],
      thinking: { type: 'enabled', budget_tokens: 3000 },
      output_config: { format: { type: 'json_schema', schema } },
      metadata: { user_id: 'u1' },
      temprature: 0.1,
    });
    const { request, nativeOnly } = messagesToCanonical(body);
    expect(request).toEqual({
      model: 'client-model',
      system: ['Be terse.', 'Before.'],
      messages: [
        { role: 'user', content: [text('See'), { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'iVBOR' } }, { type: 'image', source: { kind: 'url', url: 'https://example.com/a.png' } }] },
        {
          role: 'assistant',
          content: [
            { type: 'reasoning', text: 'T', signature: 's1' },
            { type: 'reasoning', text: '', redactedData: 'r' },
            text('Ok'),
            { type: 'tool_call', id: 't1', name: 'get_weather', arguments: '{"city":"Paris"}', thoughtSignature: 'gsig' },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', toolCallId: 't1', name: 'get_weather', content: [text('21C')], isError: true },
            { type: 'tool_result', toolCallId: 't1', name: 'get_weather', content: [text('a'), { type: 'image', source: { kind: 'base64', mediaType: 'image/jpeg', data: '/9j/' } }] },
          ],
        },
        { role: 'system', content: [text('Mid.')] },
        { role: 'user', content: [] },
      ],
      tools: [{ name: 'get_weather', description: 'Weather', parameters }],
      toolChoice: 'required',
      parallelToolCalls: false,
      maxTokens: 1000,
      temperature: 0.5,
      topP: 0.9,
      topK: 5,
      stop: ['END'],
      reasoning: { budgetTokens: 3000, effort: 'low' },
      responseFormat: { type: 'json_schema', name: 'output', schema, param: 'output_config.format' },
      stream: false,
      user: 'u1',
      affinityHint: 'user:u1',
      webSearch: true,
      untranslated: ['search_result blocks in tool results'],
      // What only Anthropic models read, measured for the hold: the search result's and the document's text.
      opaque: [
        { kind: 'text', chars: 'https://example.com'.length + 'x'.length },
        { kind: 'text', chars: 'doc'.length },
      ],
      unknownFields: [{ name: 'temprature', meant: [...MESSAGES_FIELDS.translated, ...MESSAGES_FIELDS.known] }],
    });
    expect(nativeOnly).toMatchObject({ status: 400, param: 'messages[5].content[0].type', message: "Content blocks of type 'document' can only be sent to Anthropic models." });
  });

  it('thinking and effort → canonical reasoning', () => {
    const reasoning = (extra: Record<string, unknown>) => messagesToCanonical(parse({ messages: hi, ...extra })).request.reasoning;
    expect(reasoning({})).toBeUndefined();
    expect(reasoning({ thinking: { type: 'disabled' }, output_config: { effort: 'high' } })).toBeUndefined();
    expect(reasoning({ thinking: { type: 'adaptive' } })).toEqual({ effort: 'high', adaptive: true });
    expect(reasoning({ thinking: { type: 'adaptive' }, output_config: { effort: 'medium' } })).toEqual({ effort: 'medium', adaptive: true });
    expect(reasoning({ output_config: { effort: 'max' } })).toEqual({ effort: 'max', adaptive: true });
    expect(reasoning({ thinking: { type: 'enabled', budget_tokens: 2048 }, output_config: { effort: 'xhigh' } })).toEqual({ budgetTokens: 2048, effort: 'xhigh' });
    expect(reasoning({ thinking: { type: 'enabled', budget_tokens: 20000 } })).toEqual({ budgetTokens: 20000, effort: 'high' });
  });

  it('tool_choice auto, none and a named tool', () => {
    const choice = (tool_choice: Record<string, unknown>) => messagesToCanonical(parse({ messages: hi, tool_choice })).request;
    expect(choice({ type: 'auto' })).toMatchObject({ toolChoice: 'auto', parallelToolCalls: undefined });
    expect(choice({ type: 'none' }).toolChoice).toBe('none');
    expect(choice({ type: 'tool', name: 'get_weather' }).toolChoice).toEqual({ name: 'get_weather' });
  });

  it('file ids and non-text system blocks are for Anthropic models only', () => {
    expect(messagesToCanonical(parse({ messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'file', file_id: 'file_1' } }] }] })).nativeOnly).toMatchObject({
      param: 'messages[0].content[0].source',
      message: 'Image file ids can only be sent to Anthropic models.',
    });
    // Inside a tool result too (it once became an image with neither media type nor data).
    const toolResult = { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'the chart:' }, { type: 'image', source: { type: 'file', file_id: 'file_2' } }] };
    const call = { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'chart', input: {} }] };
    expect(messagesToCanonical(parse({ messages: [...hi, call, { role: 'user', content: [toolResult] }] })).nativeOnly).toMatchObject({
      param: 'messages[2].content[0].content[1].source',
      message: 'Image file ids can only be sent to Anthropic models.',
    });
    expect(messagesToCanonical(parse({ messages: [...hi, { role: 'system', content: [{ type: 'text', text: 'x' }, { type: 'search_result', source: 's', title: 't', content: [] }] }] })).nativeOnly).toMatchObject({
      param: 'messages[1].content',
    });
  });
});

describe('stop reason and usage', () => {
  it.each([
    ['stop', null, 'end_turn'],
    ['stop', 'END', 'stop_sequence'],
    ['length', null, 'max_tokens'],
    ['tool_calls', null, 'tool_use'],
    ['content_filter', null, 'refusal'],
    ['refusal', null, 'refusal'],
    ['pause', null, 'pause_turn'],
  ] as const)('messagesStop(%s, %s) = %s', (reason, stopSequence, expected) => {
    expect(messagesStop(reason, stopSequence)).toBe(expected);
  });

  it("messagesUsage gives back Anthropic's own split (the recorded prompt-cache usage: 6 uncached, 3337 written, 6289 read)", () => {
    const recorded = decodeStream(new MessagesStreamDecoder(), chunkLines(`${VERCEL}anthropic/src/__fixtures__/anthropic-code-execution-20260120-prompt-cache.1.chunks.txt`));
    const usage = (recorded.find((e) => e.type === 'usage') as C.StreamEvent & { type: 'usage' }).usage;
    expect(messagesUsage(usage)).toEqual({
      input_tokens: 6,
      output_tokens: 198,
      cache_creation_input_tokens: 3337,
      cache_read_input_tokens: 6289,
      // Writes are named by lifetime when there are some (message_start said 5-minute ones).
      cache_creation: { ephemeral_5m_input_tokens: 3337, ephemeral_1h_input_tokens: 0 },
    });
    expect(messagesUsage(null)).toEqual({ input_tokens: 0, output_tokens: 0 });
  });

  it('messagesUsage: 1-hour writes apart, thinking in output_tokens_details, searches in server_tool_use (an OpenAI-shaped usage with every part)', () => {
    const u: C.Usage = { inputTokens: 10000, outputTokens: 900, cachedTokens: 6000, cacheWriteTokens: 3000, cacheWrite1hTokens: 1000, reasoningTokens: 700, webSearchCalls: 2, audioInputTokens: 50 };
    expect(messagesUsage(u)).toEqual({
      input_tokens: 1000,
      output_tokens: 900,
      cache_creation_input_tokens: 3000,
      cache_read_input_tokens: 6000,
      cache_creation: { ephemeral_5m_input_tokens: 2000, ephemeral_1h_input_tokens: 1000 },
      output_tokens_details: { thinking_tokens: 700 },
      server_tool_use: { web_search_requests: 2 },
    });
  });

  it('messagesUsage: input_tokens is never negative, whatever the parts claim', () => {
    expect(messagesUsage({ inputTokens: 100, outputTokens: 5, cachedTokens: 90, cacheWriteTokens: 20, reasoningTokens: 0 })).toMatchObject({ input_tokens: 0, cache_read_input_tokens: 90, cache_creation_input_tokens: 20 });
  });
});

describe('canonicalToMessages', () => {
  it("a recorded OpenAI answer as a Messages body, in the client's model name", () => {
    const body = fixtureJson<OpenAIWire.ChatCompletion>(`${VERCEL}openai/src/chat/__fixtures__/openai-text.json`);
    expect(canonicalToMessages(decodeChatResponse(body), 'client-model')).toEqual({
      id: msgId,
      type: 'message',
      role: 'assistant',
      model: 'client-model',
      content: [{ type: 'text', text: atString(body, 'choices', 0, 'message', 'content') }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 16, output_tokens: 363, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    });
  });

  it('a recorded Gemini call: its thought signature travels in an empty thinking block before the tool_use', () => {
    const body = fixtureJson<GeminiWire.GenerateContentResponse>(`${VERCEL}google/src/__fixtures__/google-tool-call.json`);
    const decoded = decodeGenerateContentResponse(body);
    expect(canonicalToMessages(decoded, 'client-model')).toEqual({
      id: msgId,
      type: 'message',
      role: 'assistant',
      model: 'client-model',
      content: [
        { type: 'thinking', thinking: '', signature: atString(body, 'candidates', 0, 'content', 'parts', 0, 'thoughtSignature') },
        { type: 'tool_use', id: (decoded.content[0] as C.ToolCallPart).id, name: 'weather', input: { location: 'San Francisco' } },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      // Gemini's thoughts (893 of the 908) are the thinking.
      usage: { input_tokens: 29, output_tokens: 908, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens_details: { thinking_tokens: 893 } },
    });
  });

  it('unsigned reasoning is a thinking block with an empty signature; redacted stays redacted; a stop sequence is named', () => {
    const r: C.Response = { id: 'x', model: 'up', content: [{ type: 'reasoning', text: 'Hmm.' }, { type: 'reasoning', text: '', redactedData: 'red' }, text('Done')], finishReason: 'stop', stopSequence: 'END', usage: null };
    expect(canonicalToMessages(r, 'client-model')).toMatchObject({
      content: [{ type: 'thinking', thinking: 'Hmm.', signature: '' }, { type: 'redacted_thinking', data: 'red' }, { type: 'text', text: 'Done' }],
      stop_reason: 'stop_sequence',
      stop_sequence: 'END',
      usage: { input_tokens: 0, output_tokens: 0 },
    });
  });
});

describe('MessagesStreamEncoder', () => {
  const start = { type: 'message_start', message: { id: msgId, type: 'message', role: 'assistant', model: 'client-model', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 0, output_tokens: 0 } } };

  it('a recorded Gemini call stream: the signature in its own thinking block, then the tool_use block', () => {
    const lines = chunkLines(`${VERCEL}google/src/__fixtures__/google-tool-call-gemini3.chunks.txt`);
    const decoded = decodeStream(new GenerateContentStreamDecoder(), lines);
    const signature = atString(JSON.parse(lines[0]!), 'candidates', 0, 'content', 'parts', 0, 'thoughtSignature');
    const enc = new MessagesStreamEncoder('client-model');
    const out = decoded.map((e) => enc.push(e)).join('') + enc.end();
    expect(namedEvents(out)).toEqual([
      start,
      { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature } },
      { type: 'content_block_stop', index: 0 },
      { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: expect.stringMatching(/^call_/), name: 'weather', input: {} } },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"location":"San Francisco"}' } },
      { type: 'content_block_stop', index: 1 },
      {
        type: 'message_delta',
        delta: { stop_reason: 'tool_use', stop_sequence: null },
        usage: { input_tokens: 29, output_tokens: 819, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens_details: { thinking_tokens: 804 } },
      },
      { type: 'message_stop' },
    ]);
  });

  it('a recorded Anthropic thinking stream, re-encoded block by block', () => {
    const lines = chunkLines(`${VERCEL}anthropic/src/__fixtures__/anthropic-clear-thinking.1.chunks.txt`);
    const signature = atString(JSON.parse(lines.find((l) => l.includes('signature_delta'))!), 'delta', 'signature');
    const enc = new MessagesStreamEncoder('client-model');
    const out = decodeStream(new MessagesStreamDecoder(), lines).map((e) => enc.push(e)).join('') + enc.end();
    const thinking = ['The previous', ' result', ' was', ' 925.', ' Now', ' I need to divide that', ' by 5.\n\n925', ' ÷ 5 ', '= 185', ''];
    expect(namedEvents(out)).toEqual([
      start,
      { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } },
      ...thinking.map((t) => ({ type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: t } })),
      { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature } },
      { type: 'content_block_stop', index: 0 },
      { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } },
      ...['925', ' ÷ 5 ', '= 185'].map((t) => ({ type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: t } })),
      { type: 'content_block_stop', index: 1 },
      { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { input_tokens: 69, output_tokens: 53, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } },
      { type: 'message_stop' },
    ]);
  });

  it("the start event's usage carries the input split when the upstream reported it first", () => {
    const enc = new MessagesStreamEncoder('client-model');
    const out = enc.push({ type: 'start', id: 'up', model: 'up', usage: { inputTokens: 100, cachedTokens: 60 } });
    expect(namedEvents(out)[0]).toEqual({ ...start, message: { ...start.message, usage: { input_tokens: 40, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 60 } } });
  });
});
