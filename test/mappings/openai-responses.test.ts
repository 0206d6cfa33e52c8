// server/providers/openai/responses.ts: OpenAI Responses answers and typed stream events →
// canonical (read on the pass-through path for billing and structured-output checks), from recordings.
import { describe, expect, it } from 'vitest';
import { ResponsesStreamDecoder, decodeResponseObject, decodeResponsesUsage, openAiResponses } from '../../server/providers/openai/responses.ts';
import { UpstreamStreamError } from '../../server/upstream/errors.ts';
import type * as C from '../../server/translate/canonical.ts';
import { VERCEL, accumulate, at, atString, callContext, chunkLines, decodeStream, fixtureJson, joined, request } from './fixtures.ts';
import type * as OpenAIWire from '../../server/providers/openai/wire.ts';

const DIR = `${VERCEL}openai/src/responses/__fixtures__/`;
const usage = (inputTokens: number, outputTokens: number, cachedTokens = 0, reasoningTokens = 0): C.Usage => ({ inputTokens, outputTokens, cachedTokens, cacheWriteTokens: 0, reasoningTokens });

/** A recording's streams: several back-to-back ones (an agent's steps) are split at each response.created. */
function streams(rel: string): string[][] {
  const out: string[][] = [];
  for (const line of chunkLines(rel)) {
    if (at(JSON.parse(line), 'type') === 'response.created') out.push([]);
    out[out.length - 1]!.push(line);
  }
  return out;
}

/** The value the recording's `.done` event of a kind carries (what the deltas must add up to). */
function doneValue(lines: string[], type: string, key: string): string {
  const line = lines.find((l) => at(JSON.parse(l), 'type') === type);
  if (!line) throw new Error(`no ${type} in the recording`);
  return atString(JSON.parse(line), key);
}

describe('decodeResponsesUsage', () => {
  it('reads input, cached, output and reasoning tokens (web search answer: 19681 in of which 3712 cached, 3773 out of which 3136 reasoning)', () => {
    expect(decodeResponsesUsage(at(fixtureJson(`${DIR}openai-web-search-tool.1.json`), 'usage') as OpenAIWire.ResponsesUsage)).toEqual(usage(19681, 3773, 3712, 3136));
  });

  it('reads cache writes, a part of the input (programmatic-tool-calling.1.json: 631 in, 0 written, 139 out of which 55 reasoning)', () => {
    const u = at(fixtureJson(`${DIR}programmatic-tool-calling.1.json`), 'usage') as OpenAIWire.ResponsesUsage;
    expect(u).toMatchObject({ input_tokens_details: { cache_write_tokens: 0, cached_tokens: 0 } });
    expect(decodeResponsesUsage(u)).toEqual(usage(631, 139, 0, 55));
    expect(decodeResponsesUsage({ ...u, input_tokens_details: { cached_tokens: 100, cache_write_tokens: 500 } })).toEqual({ ...usage(631, 139, 100, 55), cacheWriteTokens: 500 });
  });

  it('web searches are the counted web_search_call items, set only when there were some', () => {
    const u = at(fixtureJson(`${DIR}openai-web-search-tool.1.json`), 'usage') as OpenAIWire.ResponsesUsage;
    expect(decodeResponsesUsage(u, 3)).toEqual({ ...usage(19681, 3773, 3712, 3136), webSearchCalls: 3 });
    expect(decodeResponsesUsage(u, 0)).not.toHaveProperty('webSearchCalls');
  });

  it('is null when the answer has none', () => {
    expect(decodeResponsesUsage(null)).toBeNull();
  });
});

describe('decodeResponseObject', () => {
  it('reasoning summary and message (openai-reasoning-encrypted-content.1.json)', () => {
    const body = fixtureJson<OpenAIWire.ResponseObject>(`${DIR}openai-reasoning-encrypted-content.1.json`);
    expect(decodeResponseObject(body)).toEqual({
      id: 'resp_0f35ed53160b395301693cc957829881909359e7f80cdd20b5',
      model: 'gpt-5-mini-2025-08-07',
      content: [
        { type: 'reasoning', text: atString(body, 'output', 0, 'summary', 0, 'text') },
        { type: 'text', text: '12 + 7 = 19\n19 × 3 = 57\n57 × 10 = 570\n\nFinal result: 570' },
      ],
      finishReason: 'stop',
      usage: usage(865, 163, 0, 128),
      webSearch: false,
    });
  });

  it('web search calls mark the answer as searched; reasoning items without summary are empty reasoning (openai-web-search-tool.1.json)', () => {
    const body = fixtureJson<OpenAIWire.ResponseObject>(`${DIR}openai-web-search-tool.1.json`);
    const empty = { type: 'reasoning', text: '' };
    expect(decodeResponseObject(body)).toEqual({
      id: 'resp_0953eda47ee17412006933306199c88195b44f9cf2986e1d5b',
      model: 'gpt-5-mini-2025-08-07',
      content: [empty, empty, empty, empty, { type: 'text', text: atString(body, 'output', 7, 'content', 0, 'text') }],
      finishReason: 'stop',
      // Three web_search_call items in the output.
      usage: { ...usage(19681, 3773, 3712, 3136), webSearchCalls: 3 },
      webSearch: true,
    });
  });

  it('a function call ends the turn with tool_calls; tool search items carry nothing (openai-tool-search.1.json)', () => {
    expect(decodeResponseObject(fixtureJson(`${DIR}openai-tool-search.1.json`))).toEqual({
      id: 'resp_04bd69550b37ba260069aa689530d0819094482b7c14059a0f',
      model: 'gpt-5.4-2026-03-05',
      content: [{ type: 'tool_call', id: 'call_ytqozXvUXG8NN1b0IODxzUaE', name: 'get_weather', arguments: '{"location":"San Francisco, CA","unit":"fahrenheit"}' }],
      finishReason: 'tool_calls',
      usage: usage(640, 46, 0, 20),
      webSearch: false,
    });
  });

  it('two message items (commentary, then the answer) are two text parts (openai-phase.1.json)', () => {
    const body = fixtureJson<OpenAIWire.ResponseObject>(`${DIR}openai-phase.1.json`);
    expect(decodeResponseObject(body)).toEqual({
      id: 'resp_0465b6d1ae1f97c500699f88318ee481a3b627f7fcb4875152',
      model: 'gpt-5.3-codex',
      content: [
        { type: 'text', text: atString(body, 'output', 0, 'content', 0, 'text') },
        { type: 'text', text: atString(body, 'output', 1, 'content', 0, 'text') },
      ],
      finishReason: 'stop',
      usage: usage(7243, 423, 3072, 58),
      webSearch: false,
    });
  });

  it('status incomplete: max_output_tokens → length, content_filter → content_filter (recorded answer with its status as the spec words it)', () => {
    const body = fixtureJson(`${DIR}openai-reasoning-encrypted-content.1.json`) as Record<string, unknown>;
    expect(decodeResponseObject({ ...body, status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } }).finishReason).toBe('length');
    expect(decodeResponseObject({ ...body, status: 'incomplete', incomplete_details: { reason: 'content_filter' } }).finishReason).toBe('content_filter');
  });
});

describe('ResponsesStreamDecoder', () => {
  const [step1, step2, step3, step4] = streams(`${DIR}openai-reasoning-encrypted-content.1.chunks.txt`);

  it('the recording holds four streams of an agent run', () => {
    expect([step1, step2, step3, step4].map((s) => s?.length)).toEqual([56, 19, 19, 16]);
  });

  it('step 1: reasoning summary, then a function call at output_index 1', () => {
    const events = decodeStream(new ResponsesStreamDecoder(), step1!);
    const summary = doneValue(step1!, 'response.reasoning_summary_text.done', 'text');
    const args = doneValue(step1!, 'response.function_call_arguments.done', 'arguments');
    expect(args).toBe('{"a":12,"b":7,"op":"add"}');
    expect(joined(events, 'reasoning')).toBe(summary);
    expect(events[0]).toEqual({ type: 'start', id: 'resp_01830d662ab3856501693c321345c88190b0de00f3b9975691', model: 'gpt-5.1-codex-max' });
    expect(events.filter((e) => e.type === 'tool_call_start')).toEqual([{ type: 'tool_call_start', index: 1, id: 'call_AB6AaRZ1FYZB2RwS6A5vbdqn', name: 'calculator' }]);
    expect(events.slice(-2)).toEqual([
      { type: 'finish', reason: 'tool_calls' },
      { type: 'usage', usage: usage(134, 28) },
    ]);
    expect(accumulate(events)).toEqual({
      id: 'resp_01830d662ab3856501693c321345c88190b0de00f3b9975691',
      model: 'gpt-5.1-codex-max',
      content: [
        { type: 'reasoning', text: summary },
        { type: 'tool_call', id: 'call_AB6AaRZ1FYZB2RwS6A5vbdqn', name: 'calculator', arguments: args, thoughtSignature: undefined },
      ],
      finishReason: 'tool_calls',
      stopSequence: null,
      usage: usage(134, 28),
      webSearch: false,
      failure: null,
    });
  });

  it('step 4: the final text answer', () => {
    const events = decodeStream(new ResponsesStreamDecoder(), step4!);
    expect(accumulate(events)).toEqual({
      id: 'resp_01830d662ab3856501693c3217ba4c8190a3ddf6c839d4f12a',
      model: 'gpt-5.1-codex-max',
      content: [{ type: 'text', text: doneValue(step4!, 'response.output_text.done', 'text') }],
      finishReason: 'stop',
      stopSequence: null,
      usage: usage(299, 12),
      webSearch: false,
      failure: null,
    });
  });

  it('a function call after tool search items (openai-tool-search.1.chunks.txt)', () => {
    const lines = chunkLines(`${DIR}openai-tool-search.1.chunks.txt`);
    const deltas = lines.map((l) => JSON.parse(l)).filter((e) => at(e, 'type') === 'response.function_call_arguments.delta').map((e) => ({ type: 'tool_call_delta', index: 2, arguments: atString(e, 'delta') }));
    expect(decodeStream(new ResponsesStreamDecoder(), lines)).toEqual([
      { type: 'start', id: 'resp_08a14073c7135dc10069aa68621de481908b2fc660fb4fc0af', model: 'gpt-5.4-2026-03-05' },
      { type: 'tool_call_start', index: 2, id: 'call_pddfxhfOx4gY56zn4vIIEbFp', name: 'get_weather' },
      ...deltas,
      { type: 'finish', reason: 'tool_calls' },
      { type: 'usage', usage: usage(640, 46, 0, 20) },
    ]);
    expect(deltas.map((d) => d.arguments).join('')).toBe('{"location":"San Francisco, CA","unit":"fahrenheit"}');
  });

  it('web search: one web_search event per web_search_call item, the text, cached and reasoning usage (openai-web-search-tool.1.chunks.txt)', () => {
    const lines = chunkLines(`${DIR}openai-web-search-tool.1.chunks.txt`);
    const events = decodeStream(new ResponsesStreamDecoder(), lines);
    expect(events.filter((e) => e.type === 'web_search')).toHaveLength(6);
    expect(accumulate(events)).toEqual({
      id: 'resp_0cc96ac817fdc57e00693337060a408198b92bf1f99cf1b8ec',
      model: 'gpt-5-mini-2025-08-07',
      content: [{ type: 'text', text: doneValue(lines, 'response.output_text.done', 'text') }],
      finishReason: 'stop',
      stopSequence: null,
      // Six web_search_call items in response.completed's output.
      usage: { ...usage(31073, 4416, 3712, 3712), webSearchCalls: 6 },
      webSearch: true,
      failure: null,
    });
  });

  it('web search: a final response without its output counts the web_search_call items the stream announced (openai-web-search-tool.1.chunks.txt, output left out)', () => {
    const lines = chunkLines(`${DIR}openai-web-search-tool.1.chunks.txt`).map((l) => {
      const e = JSON.parse(l);
      return at(e, 'type') === 'response.completed' ? JSON.stringify({ ...e, response: { ...e.response, output: [] } }) : l;
    });
    expect(decodeStream(new ResponsesStreamDecoder(), lines).filter((e) => e.type === 'usage')).toEqual([{ type: 'usage', usage: { ...usage(31073, 4416, 3712, 3712), webSearchCalls: 6 } }]);
  });

  it('an error event and response.failed are forwarded as failures with their code (openai-error.1.chunks.txt)', () => {
    const message =
      'You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.';
    expect(decodeStream(new ResponsesStreamDecoder(), chunkLines(`${DIR}openai-error.1.chunks.txt`))).toEqual([
      { type: 'start', id: 'resp_05500b38c2cd9bfc00691c7c9d222481a3b595421266dab424', model: 'gpt-5-nano-2025-08-07' },
      { type: 'failed', message, code: 'insufficient_quota' },
      { type: 'failed', message, code: 'insufficient_quota' },
    ]);
  });

  it('a stream that ends before response.completed was cut', () => {
    const decoder = new ResponsesStreamDecoder();
    for (const data of step4!.slice(0, -1)) decoder.push({ data });
    expect(() => decoder.end()).toThrow(new UpstreamStreamError('the upstream stream ended before response.completed'));
  });
});

describe('openAiResponses adapter', () => {
  it('sends only the model: a Responses request is passed through as the client wrote it', () => {
    expect(openAiResponses.body(request({ model: 'gpt-5', maxTokens: 10, system: ['x'] }), callContext('openai'))).toEqual({ model: 'gpt-5' });
  });
});
