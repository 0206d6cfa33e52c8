// server/translate/responses.ts: the Responses client format. Requests → canonical (with the
// gateway's own reasoning encodings and item references); canonical responses decoded from recorded
// upstream answers → Response objects and the typed event sequence.
import { describe, expect, it } from 'vitest';
import { ResponsesRequest } from '../../contract/responses.ts';
import { MessagesStreamDecoder, decodeMessagesResponse } from '../../server/providers/anthropic/messages.ts';
import { decodeGenerateContentResponse } from '../../server/providers/gemini/generate-content.ts';
import { GatewayError } from '../../server/runtime/errors.ts';
import { RESPONSES_FIELDS } from '../../server/translate/request-fields.ts';
import {
  ResponsesStreamEncoder,
  canonicalToResponse,
  itemReferenceIds,
  outputItems,
  responseShell,
  responsesToCanonical,
  responsesUsage,
} from '../../server/translate/responses.ts';
import type * as C from '../../server/translate/canonical.ts';
import { VERCEL, at, atString, chunkLines, decodeStream, fixtureJson, namedEvents } from './fixtures.ts';
import type * as GeminiWire from '../../server/providers/gemini/wire.ts';
import type * as AnthropicWire from '../../server/providers/anthropic/wire.ts';

type Json = Record<string, unknown>;
const ANTHROPIC = `${VERCEL}anthropic/src/__fixtures__/`;
const GENERATED = 'A'.repeat(20) + 'b'.repeat(10) + '0123456789';
const id = (prefix: string) => expect.stringMatching(new RegExp(`^${prefix}_[0-9A-Za-z]{40}$`));
const text = (t: string): C.TextPart => ({ type: 'text', text: t });
const parse = (body: Json) => ResponsesRequest.parse({ model: 'client-model', ...body });
const noMemory = () => undefined;

const events = (sse: string) => namedEvents(sse) as Json[];

describe('itemReferenceIds', () => {
  it('only ids this gateway makes, each once', () => {
    const body = parse({
      input: [
        { type: 'item_reference', id: `msg_${GENERATED}` },
        { type: 'item_reference', id: `msg_${GENERATED}` },
        { type: 'item_reference', id: `fc_${GENERATED}` },
        { type: 'item_reference', id: 'msg_0465b6d1ae1f97c500699f883243a481a3b50b985223592984' },
        { role: 'user', content: 'Hi' },
      ],
    });
    expect(itemReferenceIds(body)).toEqual([`msg_${GENERATED}`, `fc_${GENERATED}`]);
    expect(itemReferenceIds(parse({ input: 'Hi' }))).toEqual([]);
  });
});

describe('responsesToCanonical', () => {
  const schema = { type: 'object', properties: { answer: { type: 'string' } } };

  it('every item and field in its canonical place, reasoning state from other providers decoded', () => {
    const body = parse({
      instructions: 'Be terse.',
      input: [
        { role: 'developer', content: 'Use metric.' },
        { type: 'message', role: 'system', content: [{ type: 'input_text', text: 'Sys2.' }] },
        { role: 'user', content: [{ type: 'input_text', text: 'See' }, { type: 'input_image', image_url: 'data:image/png;base64,iVBOR', detail: 'low' }] },
        { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'Signed.' }], encrypted_content: 'mg1:a:sig1' },
        { type: 'reasoning', summary: [], encrypted_content: 'mg1:r:red' },
        { type: 'reasoning', summary: [{ type: 'summary_text', text: 'Plain.' }], encrypted_content: 'gAAAAB-openai-own' },
        { role: 'assistant', content: [{ type: 'output_text', text: 'Ok' }, { type: 'refusal', refusal: ' no' }] },
        { type: 'reasoning', summary: [], encrypted_content: 'mg1:g:gsig' },
        { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call_output', call_id: 'call_1', output: '21C' },
        { type: 'function_call_output', call_id: 'call_1', output: [{ type: 'input_text', text: 'a' }, { type: 'input_text', text: 'b' }] },
        { type: 'item_reference', id: `msg_${GENERATED}` },
        { type: 'item_reference', id: 'msg_unknown' },
        { type: 'web_search_call', id: 'ws_1', status: 'completed' },
      ],
      tools: [{ type: 'function', name: 'get_weather', description: null, parameters: null }, { type: 'web_search_preview' }, { type: 'code_interpreter', container: { type: 'auto' } }],
      tool_choice: { type: 'function', name: 'get_weather' },
      parallel_tool_calls: true,
      max_output_tokens: 300,
      temperature: 0.7,
      top_p: 0.95,
      reasoning: { effort: 'high', summary: 'auto' },
      text: { format: { type: 'json_schema', name: 'ans', schema, strict: true } },
      stream: true,
      store: false,
      truncation: 'auto',
      temprature: 1,
    });
    const referenced = new Map<string, Json>([[`msg_${GENERATED}`, { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Remembered.' }] }]]);
    const { request, builtIns, nativeOnly } = responsesToCanonical(body, referenced);
    expect(request).toEqual({
      model: 'client-model',
      system: ['Be terse.', 'Use metric.', 'Sys2.'],
      messages: [
        { role: 'user', content: [text('See'), { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'iVBOR' }, detail: 'low' }] },
        {
          role: 'assistant',
          content: [
            { type: 'reasoning', text: 'Signed.', signature: 'sig1' },
            { type: 'reasoning', text: '', redactedData: 'red' },
            { type: 'reasoning', text: 'Plain.' },
            text('Ok'),
            text(' no'),
            { type: 'tool_call', id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}', thoughtSignature: 'gsig' },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', toolCallId: 'call_1', name: 'get_weather', content: [text('21C')] },
            { type: 'tool_result', toolCallId: 'call_1', name: 'get_weather', content: [text('ab')] },
          ],
        },
        { role: 'assistant', content: [text('Remembered.')] },
      ],
      tools: [{ name: 'get_weather', parameters: { type: 'object', properties: {} } }],
      toolChoice: { name: 'get_weather' },
      parallelToolCalls: true,
      maxTokens: 300,
      temperature: 0.7,
      topP: 0.95,
      reasoning: { effort: 'high' },
      responseFormat: { type: 'json_schema', name: 'ans', schema, strict: true, param: 'text.format' },
      stream: true,
      webSearch: true,
      untranslated: ['truncation'],
      // What only OpenAI models read, for the hold: the stored item the reference names, the search call's JSON.
      opaque: [
        { kind: 'stored', what: 'item_reference' },
        { kind: 'text', chars: JSON.stringify({ type: 'web_search_call', id: 'ws_1', status: 'completed' }).length },
      ],
      unknownFields: [{ name: 'temprature', meant: [...RESPONSES_FIELDS.translated, ...RESPONSES_FIELDS.known] }],
    });
    expect(builtIns).toEqual(['web_search_preview', 'code_interpreter']);
    expect(nativeOnly).toBeInstanceOf(GatewayError);
    expect(nativeOnly).toMatchObject({ status: 400, param: 'input[12].id' });
  });

  it('a string input; tool_choice strings and other objects; json_object format', () => {
    expect(responsesToCanonical(parse({ input: 'Hi', tool_choice: 'required', text: { format: { type: 'json_object' } } }), new Map())).toEqual({
      request: { model: 'client-model', system: [], messages: [{ role: 'user', content: [text('Hi')] }], toolChoice: 'required', responseFormat: { type: 'json_object', param: 'text.format' }, stream: false, webSearch: false },
      builtIns: [],
      nativeOnly: null,
    });
    expect(responsesToCanonical(parse({ input: 'Hi', tool_choice: { type: 'allowed_tools' } }), new Map()).request.toolChoice).toBe('auto');
  });

  it('stored responses, file ids and files need OpenAI', () => {
    const native = (body: Json) => responsesToCanonical(parse(body), new Map()).nativeOnly;
    expect(native({ input: 'Hi', previous_response_id: 'resp_1' })).toMatchObject({ param: 'previous_response_id' });
    expect(native({ input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'file_1' }] }] })).toMatchObject({ param: 'input[0].content[0].file_id', message: 'Image file ids can only be sent to OpenAI models.' });
    expect(native({ input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'file_1' }] }] })).toMatchObject({ param: 'input[0].content[0].type', message: "Content of type 'input_file' can only be sent to OpenAI models." });
  });

  it("a translated answer's output items sent back as input give back its canonical content (recorded Anthropic thinking answer)", () => {
    const decoded = decodeMessagesResponse(fixtureJson(`${ANTHROPIC}anthropic-clear-thinking.1.json`));
    const input = [{ role: 'user', content: '925 / 5?' }, ...outputItems(decoded.content)];
    expect(responsesToCanonical(parse({ input }), new Map()).request.messages).toEqual([
      { role: 'user', content: [text('925 / 5?')] },
      { role: 'assistant', content: decoded.content },
    ]);
  });
});

describe('responsesUsage', () => {
  it("a Claude answer's whole prompt with its cache reads and writes as parts (the recorded prompt-cache stream: 6 + 6289 read + 3337 written)", () => {
    const events = decodeStream(new MessagesStreamDecoder(), chunkLines(`${ANTHROPIC}anthropic-code-execution-20260120-prompt-cache.1.chunks.txt`));
    const usage = (events.find((e) => e.type === 'usage') as C.StreamEvent & { type: 'usage' }).usage;
    expect(responsesUsage(usage)).toEqual({
      input_tokens: 9632,
      input_tokens_details: { cached_tokens: 6289, cache_write_tokens: 3337 },
      output_tokens: 198,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 9830,
    });
    expect(responsesUsage(null)).toBeNull();
  });

  it("a Gemini answer's thoughts are the reasoning tokens (google-tool-call.json: 29 in, 15 + 893 thought out)", () => {
    const usage = decodeGenerateContentResponse(fixtureJson(`${VERCEL}google/src/__fixtures__/google-tool-call.json`)).usage;
    expect(responsesUsage(usage)).toEqual({ input_tokens: 29, input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 }, output_tokens: 908, output_tokens_details: { reasoning_tokens: 893 }, total_tokens: 937 });
  });
});

describe('canonicalToResponse', () => {
  const raw = { instructions: 'Be terse.', max_output_tokens: 300, temperature: 0.5, reasoning: { effort: 'low' as const } };

  it("a recorded Anthropic thinking answer: signed reasoning in encrypted_content, the client's settings echoed, items remembered", () => {
    const body = fixtureJson<AnthropicWire.Message>(`${ANTHROPIC}anthropic-clear-thinking.1.json`);
    const remembered: Json[][] = [];
    const r = canonicalToResponse(decodeMessagesResponse(body), 'client-model', raw, (items) => remembered.push(items));
    const output = [
      { id: id('rs'), type: 'reasoning', summary: [{ type: 'summary_text', text: '925 divided by 5 = 185' }], encrypted_content: `mg1:a:${atString(body, 'content', 0, 'signature')}` },
      { id: id('msg'), type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: '925 ÷ 5 = 185', annotations: [], logprobs: [] }] },
    ];
    expect(r).toEqual({
      id: id('resp'),
      object: 'response',
      created_at: expect.any(Number),
      status: 'completed',
      error: null,
      incomplete_details: null,
      instructions: 'Be terse.',
      max_output_tokens: 300,
      model: 'client-model',
      output,
      parallel_tool_calls: true,
      previous_response_id: null,
      reasoning: { effort: 'low', summary: null },
      store: false,
      temperature: 0.5,
      text: { format: { type: 'text' } },
      tool_choice: 'auto',
      tools: [],
      top_p: null,
      truncation: 'disabled',
      usage: { input_tokens: 69, input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 }, output_tokens: 33, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 102 },
      metadata: {},
    });
    expect(remembered).toEqual([r.output]);
  });

  it('a recorded Gemini call: its thought signature as a reasoning item before the function call', () => {
    const body = fixtureJson<GeminiWire.GenerateContentResponse>(`${VERCEL}google/src/__fixtures__/google-tool-call.json`);
    const decoded = decodeGenerateContentResponse(body);
    expect(canonicalToResponse(decoded, 'client-model', {}, noMemory)).toMatchObject({
      status: 'completed',
      output: [
        { id: id('rs'), type: 'reasoning', summary: [], encrypted_content: `mg1:g:${atString(body, 'candidates', 0, 'content', 'parts', 0, 'thoughtSignature')}` },
        { id: id('fc'), type: 'function_call', status: 'completed', call_id: (decoded.content[0] as C.ToolCallPart).id, name: 'weather', arguments: '{"location":"San Francisco"}' },
      ],
      usage: { input_tokens: 29, output_tokens: 908, output_tokens_details: { reasoning_tokens: 893 }, total_tokens: 937 },
    });
  });

  it('a recorded Anthropic web search answer: consecutive text parts in one message, each with its citations', () => {
    const body = fixtureJson<AnthropicWire.Message>(`${ANTHROPIC}anthropic-web-search-tool.1.json`);
    const parts = [2, 5, 6, 7, 8, 9, 10, 11].map((i) => {
      const t = atString(body, 'content', i, 'text');
      const c = at(body, 'content', i, 'citations', 0);
      return { type: 'output_text', text: t, annotations: c ? [{ type: 'url_citation', url: at(c, 'url'), title: at(c, 'title'), start_index: 0, end_index: t.length }] : [], logprobs: [] };
    });
    expect(canonicalToResponse(decodeMessagesResponse(body), 'client-model', {}, noMemory).output).toEqual([{ id: id('msg'), type: 'message', status: 'completed', role: 'assistant', content: parts }]);
  });

  it('length and content filter finish as incomplete with their reason', () => {
    const r = (finishReason: C.FinishReason): C.Response => ({ id: 'x', model: 'm', content: [text('cut')], finishReason, usage: null });
    expect(canonicalToResponse(r('length'), 'm', {}, noMemory)).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, usage: null });
    expect(canonicalToResponse(r('refusal'), 'm', {}, noMemory)).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'content_filter' } });
    expect(canonicalToResponse(r('tool_calls'), 'm', {}, noMemory)).toMatchObject({ status: 'completed', incomplete_details: null });
  });

  it("responseShell echoes the client's tools, choice and format", () => {
    const tools = [{ type: 'function', name: 'f' }];
    expect(responseShell('resp_1', 'm', { tools, tool_choice: 'required', parallel_tool_calls: false, top_p: 0.1, text: { format: { type: 'json_object' } } }, 5)).toMatchObject({
      id: 'resp_1',
      created_at: 5,
      tools,
      tool_choice: 'required',
      parallel_tool_calls: false,
      top_p: 0.1,
      text: { format: { type: 'json_object' } },
    });
  });
});

describe('ResponsesStreamEncoder', () => {
  it('a recorded Anthropic thinking stream as the typed Responses events, numbered in order', () => {
    const lines = chunkLines(`${ANTHROPIC}anthropic-clear-thinking.1.chunks.txt`);
    const signature = atString(JSON.parse(lines.find((l) => l.includes('signature_delta'))!), 'delta', 'signature');
    const remembered: Json[][] = [];
    const enc = new ResponsesStreamEncoder('client-model', { instructions: 'Be terse.' }, (items) => remembered.push(items));
    const out = events(decodeStream(new MessagesStreamDecoder(), lines).map((e) => enc.push(e)).join('') + enc.end());
    const rs = at(out[2], 'item', 'id');
    const msg = at(out.find((e) => e.type === 'response.output_item.added' && at(e, 'output_index') === 1), 'item', 'id');
    const shell = at(out[0], 'response') as Json;
    const thinking = ['The previous', ' result', ' was', ' 925.', ' Now', ' I need to divide that', ' by 5.\n\n925', ' ÷ 5 ', '= 185', ''];
    const summary = thinking.join('');
    const reasoningItem = { id: rs, type: 'reasoning', summary: [{ type: 'summary_text', text: summary }], encrypted_content: `mg1:a:${signature}` };
    const part = { type: 'output_text', text: '925 ÷ 5 = 185', annotations: [], logprobs: [] };
    const messageItem = { id: msg, type: 'message', status: 'completed', role: 'assistant', content: [part] };
    const expected: Json[] = [
      { type: 'response.created', response: shell },
      { type: 'response.in_progress', response: shell },
      { type: 'response.output_item.added', output_index: 0, item: { id: rs, type: 'reasoning', summary: [] } },
      { type: 'response.reasoning_summary_part.added', item_id: rs, output_index: 0, summary_index: 0, part: { type: 'summary_text', text: '' } },
      ...thinking.map((delta) => ({ type: 'response.reasoning_summary_text.delta', item_id: rs, output_index: 0, summary_index: 0, delta })),
      { type: 'response.reasoning_summary_text.done', item_id: rs, output_index: 0, summary_index: 0, text: summary },
      { type: 'response.reasoning_summary_part.done', item_id: rs, output_index: 0, summary_index: 0, part: { type: 'summary_text', text: summary } },
      { type: 'response.output_item.done', output_index: 0, item: reasoningItem },
      { type: 'response.output_item.added', output_index: 1, item: { id: msg, type: 'message', status: 'in_progress', role: 'assistant', content: [] } },
      { type: 'response.content_part.added', item_id: msg, output_index: 1, content_index: 0, part: { type: 'output_text', text: '', annotations: [], logprobs: [] } },
      ...['925', ' ÷ 5 ', '= 185'].map((delta) => ({ type: 'response.output_text.delta', item_id: msg, output_index: 1, content_index: 0, delta, logprobs: [] })),
      { type: 'response.output_text.done', item_id: msg, output_index: 1, content_index: 0, text: '925 ÷ 5 = 185', logprobs: [] },
      { type: 'response.content_part.done', item_id: msg, output_index: 1, content_index: 0, part },
      { type: 'response.output_item.done', output_index: 1, item: messageItem },
      {
        type: 'response.completed',
        response: {
          ...shell,
          status: 'completed',
          incomplete_details: null,
          output: [reasoningItem, messageItem],
          usage: { input_tokens: 69, input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 }, output_tokens: 53, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 122 },
        },
      },
    ];
    expect(out).toEqual(expected.map((e, i) => ({ ...e, sequence_number: i })));
    expect(shell).toMatchObject({ id: id('resp'), status: 'in_progress', instructions: 'Be terse.', model: 'client-model', output: [], usage: null });
    expect(rs).toEqual(id('rs'));
    expect(msg).toEqual(id('msg'));
    expect(remembered).toEqual([[reasoningItem, messageItem]]);
    expect(enc.nextSequence).toBe(expected.length);
  });

  it('a failure ends the stream with error and response.failed, keeping the finished items', () => {
    const enc = new ResponsesStreamEncoder('client-model', {}, noMemory);
    enc.push({ type: 'start', id: 'up', model: 'up' });
    enc.push({ type: 'tool_call_start', index: 0, id: 'call_1', name: 'now' });
    enc.push({ type: 'text', text: 'partial' });
    const err = new GatewayError(502, 'provider_error', 'upstream_error', 'The upstream failed.');
    const out = events(enc.fail(err));
    expect(out).toEqual([
      { type: 'error', code: 'upstream_error', message: 'The upstream failed.', param: null, error: { message: 'The upstream failed.', type: 'provider_error', code: 'upstream_error', param: null }, sequence_number: 8 },
      {
        type: 'response.failed',
        response: expect.objectContaining({
          status: 'failed',
          error: { code: 'upstream_error', message: 'The upstream failed.' },
          output: [{ id: id('fc'), type: 'function_call', status: 'completed', call_id: 'call_1', name: 'now', arguments: '{}' }],
          usage: null,
        }),
        sequence_number: 9,
      },
    ]);
  });
});
