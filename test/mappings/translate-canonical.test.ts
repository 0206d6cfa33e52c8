// server/translate/canonical.ts: the stream accumulator, a response as stream events, and
// mid-conversation system messages as user text.
import { describe, expect, it } from 'vitest';
import * as C from '../../server/translate/canonical.ts';
import { decodeMessagesResponse } from '../../server/providers/anthropic/messages.ts';
import { decodeGenerateContentResponse } from '../../server/providers/gemini/generate-content.ts';
import { VERCEL, accumulate, atString, fixtureJson } from './fixtures.ts';
import type * as GeminiWire from '../../server/providers/gemini/wire.ts';
import type * as AnthropicWire from '../../server/providers/anthropic/wire.ts';

const ANTHROPIC = `${VERCEL}anthropic/src/__fixtures__/`;
const text = (t: string): C.TextPart => ({ type: 'text', text: t });

describe('ResponseAccumulator', () => {
  it('joins deltas into parts, keeps calls apart by index, and records finish, usage, search and failure', () => {
    const usage: C.Usage = { inputTokens: 10, outputTokens: 20, cachedTokens: 2, cacheWriteTokens: 1, reasoningTokens: 5 };
    const events: C.StreamEvent[] = [
      { type: 'start', id: 'r1', model: 'm1' },
      { type: 'web_search' },
      { type: 'reasoning', text: 'Let me ' },
      { type: 'reasoning', text: 'think.' },
      { type: 'reasoning_signature', signature: 'sig-a' },
      { type: 'reasoning', text: 'Again.' },
      { type: 'reasoning_redacted', data: 'red' },
      { type: 'text', text: 'Hel' },
      { type: 'text', text: 'lo' },
      { type: 'annotations', annotations: [{ url: 'https://example.com', title: 'Ex', start: 0, end: 5 }] },
      { type: 'text_signature', signature: 'tsig' },
      { type: 'tool_call_start', index: 3, id: 'c1', name: 'a' },
      { type: 'tool_call_start', index: 4, id: 'c2', name: 'b', thoughtSignature: 'fsig' },
      { type: 'tool_call_delta', index: 3, arguments: '{"x":' },
      { type: 'tool_call_delta', index: 3, arguments: '1}' },
      { type: 'tool_call_delta', index: 9, arguments: 'lost' },
      { type: 'finish', reason: 'length', stopSequence: 'END' },
      { type: 'usage', usage },
      { type: 'failed', message: 'boom', code: 'x' },
    ];
    expect(accumulate(events)).toEqual({
      id: 'r1',
      model: 'm1',
      content: [
        { type: 'reasoning', text: 'Let me think.', signature: 'sig-a' },
        { type: 'reasoning', text: 'Again.' },
        { type: 'reasoning', text: '', redactedData: 'red' },
        { type: 'text', text: 'Hello', annotations: [{ url: 'https://example.com', title: 'Ex', start: 0, end: 5 }], thoughtSignature: 'tsig' },
        { type: 'tool_call', id: 'c1', name: 'a', arguments: '{"x":1}' },
        { type: 'tool_call', id: 'c2', name: 'b', arguments: '{}', thoughtSignature: 'fsig' },
      ],
      finishReason: 'length',
      stopSequence: 'END',
      usage,
      webSearch: true,
      failure: { message: 'boom', code: 'x' },
    });
  });

  it('a signature or text signature with nothing before it opens an empty part', () => {
    expect(accumulate([{ type: 'reasoning_signature', signature: 's' }, { type: 'text_signature', signature: 't' }]).content).toEqual([
      { type: 'reasoning', text: '', signature: 's' },
      { type: 'text', text: '', thoughtSignature: 't' },
    ]);
  });

  it('defaults: stop, no usage, nothing searched', () => {
    expect(accumulate([])).toEqual({ id: '', model: '', content: [], finishReason: 'stop', stopSequence: null, usage: null, webSearch: false, failure: null });
  });
});

describe('responseEvents', () => {
  it('a recorded Anthropic answer (signed thinking, text) as events, and back to the same response', () => {
    const body = fixtureJson<AnthropicWire.Message>(`${ANTHROPIC}anthropic-clear-thinking.1.json`);
    const r = decodeMessagesResponse(body);
    const signature = atString(body, 'content', 0, 'signature');
    expect(C.responseEvents(r)).toEqual([
      { type: 'start', id: 'msg_01XrsJCi8CQoLcnnWdY8RsJz', model: 'claude-sonnet-4-5-20250929' },
      { type: 'reasoning', text: '925 divided by 5 = 185' },
      { type: 'reasoning_signature', signature },
      { type: 'text', text: '925 ÷ 5 = 185' },
      { type: 'finish', reason: 'stop', stopSequence: null },
      { type: 'usage', usage: { inputTokens: 69, outputTokens: 33, cachedTokens: 0, cacheWriteTokens: 0, cacheWrite1hTokens: 0, reasoningTokens: 0 } },
    ]);
    const { failure: _f, ...back } = accumulate(C.responseEvents(r));
    expect(back).toEqual(r);
  });

  it('a recorded Gemini call with its thought signature, and a web search with citations', () => {
    const body = fixtureJson<GeminiWire.GenerateContentResponse>(`${VERCEL}google/src/__fixtures__/google-tool-call.json`);
    const r = decodeGenerateContentResponse(body);
    const call = r.content[0] as C.ToolCallPart;
    expect(C.responseEvents(r).slice(1, 3)).toEqual([
      { type: 'tool_call_start', index: 0, id: call.id, name: 'weather', thoughtSignature: atString(body, 'candidates', 0, 'content', 'parts', 0, 'thoughtSignature') },
      { type: 'tool_call_delta', index: 0, arguments: '{"location":"San Francisco"}' },
    ]);
    const searched: C.Response = { id: 'x', model: 'm', content: [{ type: 'text', text: 'Sunny.', annotations: [{ url: 'https://a', title: 'A', start: 0, end: 6 }] }, { type: 'reasoning', text: '', redactedData: 'red' }], finishReason: 'stop', usage: null, webSearch: true };
    expect(C.responseEvents(searched)).toEqual([
      { type: 'start', id: 'x', model: 'm' },
      { type: 'web_search' },
      { type: 'text', text: 'Sunny.' },
      { type: 'annotations', annotations: [{ url: 'https://a', title: 'A', start: 0, end: 6 }] },
      { type: 'reasoning_redacted', data: 'red' },
      { type: 'finish', reason: 'stop', stopSequence: undefined },
    ]);
  });
});

describe('system messages', () => {
  it('systemMessageText joins text parts; markedSystemText marks them', () => {
    expect(C.systemMessageText({ role: 'system', content: [text('One.'), text('Two.')] })).toBe('One.\n\nTwo.');
    expect(C.markedSystemText('Be brief.')).toBe('<system>\nBe brief.\n</system>');
  });

  it('systemMessagesAsUserText: joined to the user turn before, else the next one after its tool results, else a turn of their own', () => {
    const result: C.ToolResultPart = { type: 'tool_result', toolCallId: 'c1', content: [text('21C')] };
    const call: C.ToolCallPart = { type: 'tool_call', id: 'c1', name: 'w', arguments: '{}' };
    const messages: C.Message[] = [
      { role: 'system', content: [text('First.')] },
      { role: 'user', content: [text('Hi')] },
      { role: 'system', content: [text('Second.')] },
      { role: 'assistant', content: [call] },
      { role: 'system', content: [text('Third.')] },
      { role: 'user', content: [text('And?'), result] },
      { role: 'assistant', content: [text('Done.')] },
      { role: 'system', content: [text('Last.')] },
    ];
    expect(C.systemMessagesAsUserText(messages)).toEqual([
      { role: 'user', content: [text('<system>\nFirst.\n</system>'), text('Hi'), text('<system>\nSecond.\n</system>')] },
      { role: 'assistant', content: [call] },
      { role: 'user', content: [result, text('<system>\nThird.\n</system>'), text('And?')] },
      { role: 'assistant', content: [text('Done.')] },
      { role: 'user', content: [text('<system>\nLast.\n</system>')] },
    ]);
    expect(messages[1]).toEqual({ role: 'user', content: [text('Hi')] });
  });

  it('a conversation without system messages is returned as it is', () => {
    const messages: C.Message[] = [{ role: 'user', content: [text('Hi')] }];
    expect(C.systemMessagesAsUserText(messages)).toBe(messages);
  });
});

it('emptyUsage is all zeros', () => {
  expect(C.emptyUsage()).toEqual({ inputTokens: 0, outputTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 });
});
