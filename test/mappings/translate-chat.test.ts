// server/translate/chat.ts: the chat-completions client format. Requests → canonical; canonical
// responses (decoded from recorded upstream answers) → chat.completion and chunk frames.
import { describe, expect, it } from 'vitest';
import { ChatCompletionRequest } from '../../contract/chat.ts';
import { decodeMessagesResponse, MessagesStreamDecoder } from '../../server/providers/anthropic/messages.ts';
import { GenerateContentStreamDecoder, decodeGenerateContentResponse } from '../../server/providers/gemini/generate-content.ts';
import { GatewayError } from '../../server/runtime/errors.ts';
import { CHAT_FIELDS } from '../../server/translate/request-fields.ts';
import { ChatStreamEncoder, canonicalToChat, chatFinish, chatToCanonical, chatUsage, parseImageUrl } from '../../server/translate/chat.ts';
import type * as C from '../../server/translate/canonical.ts';
import { FIREBASE, VERCEL, at, atString, chunkLines, decodeStream, fixtureJson, thrownBy } from './fixtures.ts';
import type * as AnthropicWire from '../../server/providers/anthropic/wire.ts';

const ANTHROPIC = `${VERCEL}anthropic/src/__fixtures__/`;
const chatId = expect.stringMatching(/^chatcmpl-[0-9A-Za-z]{29}$/);
const text = (t: string): C.TextPart => ({ type: 'text', text: t });

/** The JSON of each `data:` frame, `[DONE]` as itself. */
function frames(sse: string): unknown[] {
  return sse
    .split('\n\n')
    .filter((f) => f !== '')
    .map((f) => {
      expect(f.startsWith('data: ')).toBe(true);
      const data = f.slice('data: '.length);
      return data === '[DONE]' ? data : JSON.parse(data);
    });
}

describe('parseImageUrl', () => {
  it('an https URL stays a URL; a data URI becomes base64 bytes without whitespace, parameters allowed', () => {
    expect(parseImageUrl('https://example.com/a.png', 'p')).toEqual({ kind: 'url', url: 'https://example.com/a.png' });
    expect(parseImageUrl('data:image/png;base64,iVBO\r\nRw0K Gg==', 'p')).toEqual({ kind: 'base64', mediaType: 'image/png', data: 'iVBORw0KGg==' });
    expect(parseImageUrl('data:image/jpeg;name=a.jpg;base64,/9j/', 'p')).toEqual({ kind: 'base64', mediaType: 'image/jpeg', data: '/9j/' });
  });

  it('a data URI that is not base64 is the client’s error, naming the parameter', () => {
    const err = thrownBy(() => parseImageUrl('data:image/png,rawbytes', 'messages[0].content[1].image_url.url'));
    expect(err).toBeInstanceOf(GatewayError);
    expect(err).toMatchObject({ status: 400, code: 'invalid_parameter', param: 'messages[0].content[1].image_url.url' });
  });
});

describe('chatToCanonical', () => {
  const schema = { type: 'object', properties: { answer: { type: 'string' } } };
  const parameters = { type: 'object', properties: { city: { type: 'string' } } };

  it('every field of a chat request in its canonical place', () => {
    const body = ChatCompletionRequest.parse({
      model: 'client-model',
      messages: [
        { role: 'system', content: 'Be terse.' },
        { role: 'developer', content: [{ type: 'text', text: 'Use metric.' }] },
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'user', content: [{ type: 'text', text: 'See:' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0K', detail: 'high' } }] },
        {
          role: 'assistant',
          content: 'Checking.',
          reasoning_details: [
            { type: 'reasoning.text', text: 'Think.', signature: 'sig' },
            { type: 'reasoning.encrypted', data: 'red' },
            { type: 'reasoning.encrypted', data: 'openai-own', id: 'rs_1' },
          ],
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' }, extra_content: { google: { thought_signature: 'gsig' } } }],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '21C' },
        { role: 'assistant', content: [{ type: 'text', text: 'It is ' }, { type: 'refusal', refusal: '21C.' }], reasoning_content: 'plain' },
      ],
      tools: [
        { type: 'function', function: { name: 'get_weather', description: 'Weather', parameters } },
        { type: 'function', function: { name: 'noop' } },
      ],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      parallel_tool_calls: false,
      max_tokens: 50,
      max_completion_tokens: 100,
      temperature: 0.2,
      top_p: 0.9,
      top_k: 40,
      seed: 1,
      frequency_penalty: 0.1,
      presence_penalty: 0.2,
      stop: 'END',
      reasoning_effort: 'low',
      response_format: { type: 'json_schema', json_schema: { name: 'answer', schema, strict: null, description: 'An answer' } },
      stream: true,
      stream_options: { include_usage: true },
      web_search_options: {},
      user: 'user-1',
      logprobs: true,
      temprature: 0.3,
    });
    expect(chatToCanonical(body)).toEqual({
      model: 'client-model',
      system: ['Be terse.', 'Use metric.'],
      messages: [
        { role: 'user', content: [text('Weather in Paris?'), text('See:'), { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'iVBORw0K' }, detail: 'high' }] },
        {
          role: 'assistant',
          content: [
            { type: 'reasoning', text: 'Think.', signature: 'sig' },
            { type: 'reasoning', text: '', redactedData: 'red' },
            text('Checking.'),
            { type: 'tool_call', id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}', thoughtSignature: 'gsig' },
          ],
        },
        { role: 'user', content: [{ type: 'tool_result', toolCallId: 'call_1', name: 'get_weather', content: [text('21C')] }] },
        { role: 'assistant', content: [{ type: 'reasoning', text: 'plain' }, text('It is 21C.')] },
      ],
      tools: [
        { name: 'get_weather', description: 'Weather', parameters },
        { name: 'noop', parameters: { type: 'object', properties: {} } },
      ],
      toolChoice: { name: 'get_weather' },
      parallelToolCalls: false,
      maxTokens: 100,
      temperature: 0.2,
      topP: 0.9,
      topK: 40,
      seed: 1,
      frequencyPenalty: 0.1,
      presencePenalty: 0.2,
      affinityHint: 'user:user-1',
      stop: ['END'],
      reasoning: { effort: 'low' },
      responseFormat: { type: 'json_schema', name: 'answer', schema, description: 'An answer' },
      stream: true,
      webSearch: true,
      untranslated: ['logprobs'],
      unknownFields: [{ name: 'temprature', meant: [...CHAT_FIELDS.translated, ...CHAT_FIELDS.known] }],
    });
  });

  it('a minimal request: no optional field set', () => {
    expect(chatToCanonical(ChatCompletionRequest.parse({ model: 'm', messages: [{ role: 'user', content: 'Hi' }], tool_choice: 'none', response_format: { type: 'json_object' } }))).toEqual({
      model: 'm',
      system: [],
      messages: [{ role: 'user', content: [text('Hi')] }],
      toolChoice: 'none',
      responseFormat: { type: 'json_object' },
      stream: false,
      webSearch: false,
    });
  });

  it("OpenRouter-style cache breakpoints: on text parts (system, user, assistant, tool), on tools, on the request", () => {
    const mark = { type: 'ephemeral' };
    const body = ChatCompletionRequest.parse({
      model: 'm',
      cache_control: { type: 'ephemeral', ttl: '1h' },
      messages: [
        { role: 'system', content: [{ type: 'text', text: 'Long instructions.' }, { type: 'text', text: ' Stable.', cache_control: mark }] },
        { role: 'developer', content: 'Plain.' },
        { role: 'user', content: [{ type: 'text', text: 'Look', cache_control: mark }, { type: 'image_url', image_url: { url: 'https://example.com/a.png' }, cache_control: mark }] },
        { role: 'assistant', content: [{ type: 'text', text: 'Calling.', cache_control: mark }], tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: [{ type: 'text', text: 'done', cache_control: mark }] },
        { role: 'user', content: [{ type: 'text', text: 'Not a mark', cache_control: { type: 'persistent' } }] },
      ],
      tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } }, cache_control: mark }],
    });
    const req = chatToCanonical(body);
    expect(req).toMatchObject({
      system: ['Long instructions. Stable.', 'Plain.'],
      // A system message's parts are joined into one entry: its last mark marks the entry.
      systemCacheControl: [mark, undefined],
      cacheControl: { type: 'ephemeral', ttl: '1h' },
      tools: [{ name: 'f', description: undefined, parameters: { type: 'object' }, cacheControl: mark }],
    });
    expect(req.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Look', cacheControl: mark }, { type: 'image', source: { kind: 'url', url: 'https://example.com/a.png' }, detail: undefined, cacheControl: mark }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Calling.', cacheControl: mark }, { type: 'tool_call', id: 'c1', name: 'f', arguments: '{}', thoughtSignature: undefined }] },
      { role: 'user', content: [{ type: 'tool_result', toolCallId: 'c1', name: 'f', content: [text('done')], cacheControl: mark }, text('Not a mark')] },
    ]);
  });

  it('content parts only OpenAI models take are refused with their path', () => {
    const body = ChatCompletionRequest.parse({ model: 'm', messages: [{ role: 'user', content: [{ type: 'text', text: 'Listen' }, { type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }] }] });
    expect(thrownBy(() => chatToCanonical(body))).toMatchObject({ status: 400, param: 'messages[0].content[1].type', message: "Content parts of type 'input_audio' can only be sent to OpenAI-format models." });
  });
});

describe('finish reason and usage', () => {
  it.each([
    ['stop', 'stop'],
    ['length', 'length'],
    ['tool_calls', 'tool_calls'],
    ['content_filter', 'content_filter'],
    ['refusal', 'content_filter'],
    ['pause', 'stop'],
  ] as const)('chatFinish(%s) = %s', (reason, expected) => {
    expect(chatFinish(reason)).toBe(expected);
  });

  it("chatUsage: a Claude answer's whole prompt, its cache reads and writes in the details (the recorded prompt-cache stream: 6 + 6289 read + 3337 written)", () => {
    const events = decodeStream(new MessagesStreamDecoder(), chunkLines(`${ANTHROPIC}anthropic-code-execution-20260120-prompt-cache.1.chunks.txt`));
    const usage = (events.find((e) => e.type === 'usage') as C.StreamEvent & { type: 'usage' }).usage;
    expect(chatUsage(usage)).toEqual({
      prompt_tokens: 9632,
      completion_tokens: 198,
      total_tokens: 9830,
      prompt_tokens_details: { cached_tokens: 6289, cache_write_tokens: 3337 },
      completion_tokens_details: { reasoning_tokens: 0 },
    });
  });

  it('chatUsage: audio and image parts where the upstream reported them (Gemini image output, Vertex recording: 299 out, 258 IMAGE)', () => {
    const usage = decodeGenerateContentResponse(fixtureJson(`${FIREBASE}vertexai/unary-success-empty-part.json`)).usage!;
    expect(chatUsage(usage)).toEqual({
      prompt_tokens: 33,
      completion_tokens: 299,
      total_tokens: 332,
      prompt_tokens_details: { cached_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0, image_tokens: 258 },
    });
    expect(chatUsage({ inputTokens: 50, outputTokens: 40, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, audioInputTokens: 30, imageInputTokens: 0, audioOutputTokens: 20 })).toEqual({
      prompt_tokens: 50,
      completion_tokens: 40,
      total_tokens: 90,
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 30, image_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 20 },
    });
  });
});

describe('canonicalToChat', () => {
  it('a recorded Anthropic web search answer: text parts joined, each citation shifted to its place in the joined text', () => {
    const body = fixtureJson<AnthropicWire.Message>(`${ANTHROPIC}anthropic-web-search-tool.1.json`);
    const t = (i: number) => atString(body, 'content', i, 'text');
    const texts = [2, 5, 6, 7, 8, 9, 10, 11].map(t);
    const startOf = (i: number) => [2, 5, 6, 7, 8, 9, 10, 11].slice(0, [2, 5, 6, 7, 8, 9, 10, 11].indexOf(i)).reduce((n, j) => n + t(j).length, 0);
    const cite = (i: number, url: string, title: string) => ({ type: 'url_citation', url_citation: { url, title, start_index: startOf(i), end_index: startOf(i) + t(i).length } });
    const crescendo = ['https://www.crescendo.ai/news/latest-ai-news-and-updates', 'The Latest AI News and AI Breakthroughs that Matter Most: 2025 | News'] as const;
    expect(canonicalToChat(decodeMessagesResponse(body), 'client-model')).toEqual({
      id: chatId,
      object: 'chat.completion',
      created: expect.any(Number),
      model: 'client-model',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: texts.join(''),
            refusal: null,
            annotations: [cite(6, 'https://acecomments.mu.nu/?post=411647', 'Daily Tech News 26 September 2024'), cite(8, ...crescendo), cite(10, ...crescendo)],
          },
          logprobs: null,
          finish_reason: 'stop',
        },
      ],
      usage: { prompt_tokens: 27118, completion_tokens: 600, total_tokens: 27718, prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0 } },
    });
  });

  it('tool calls without text: content null, reasoning handed back in reasoning_details, the Gemini signature in extra_content; no usage', () => {
    const r: C.Response = {
      id: 'x',
      model: 'up',
      content: [
        { type: 'reasoning', text: 'Think.', signature: 'sig' },
        { type: 'reasoning', text: '', redactedData: 'red' },
        { type: 'tool_call', id: 'call_1', name: 'now', arguments: '', thoughtSignature: 'gsig' },
      ],
      finishReason: 'tool_calls',
      usage: null,
    };
    expect(canonicalToChat(r, 'client-model')).toEqual({
      id: chatId,
      object: 'chat.completion',
      created: expect.any(Number),
      model: 'client-model',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: null,
            refusal: null,
            tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'now', arguments: '{}' }, extra_content: { google: { thought_signature: 'gsig' } } }],
            reasoning_content: 'Think.',
            reasoning_details: [
              { type: 'reasoning.text', text: 'Think.', signature: 'sig' },
              { type: 'reasoning.encrypted', data: 'red', format: 'anthropic-claude-v1' },
            ],
          },
          logprobs: null,
          finish_reason: 'tool_calls',
        },
      ],
    });
  });
});

describe('ChatStreamEncoder', () => {
  it('a recorded Anthropic thinking stream as chat chunks, with the usage chunk the client asked for', () => {
    const lines = chunkLines(`${ANTHROPIC}anthropic-clear-thinking.1.chunks.txt`);
    const signature = atString(JSON.parse(lines.find((l) => l.includes('signature_delta'))!), 'delta', 'signature');
    const enc = new ChatStreamEncoder('client-model', true);
    const out = decodeStream(new MessagesStreamDecoder(), lines).map((e) => enc.push(e)).join('') + enc.end();
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
      id: chatId,
      object: 'chat.completion.chunk',
      created: expect.any(Number),
      model: 'client-model',
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    });
    const thinking = ['The previous', ' result', ' was', ' 925.', ' Now', ' I need to divide that', ' by 5.\n\n925', ' ÷ 5 ', '= 185'];
    const parsed = frames(out);
    expect(parsed).toEqual([
      chunk({ role: 'assistant', content: '' }),
      ...thinking.map((t) => chunk({ reasoning_content: t, reasoning_details: [{ type: 'reasoning.text', text: t }] })),
      chunk({ reasoning_details: [{ type: 'reasoning.text', text: '', signature }] }),
      chunk({ content: '925' }),
      chunk({ content: ' ÷ 5 ' }),
      chunk({ content: '= 185' }),
      chunk({}, 'stop'),
      {
        id: chatId,
        object: 'chat.completion.chunk',
        created: expect.any(Number),
        model: 'client-model',
        choices: [],
        usage: { prompt_tokens: 69, completion_tokens: 53, total_tokens: 122, prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0 } },
      },
      '[DONE]',
    ]);
    expect(new Set(parsed.slice(0, -1).map((f) => at(f, 'id'))).size).toBe(1);
  });

  it('a recorded Gemini call: the tool call chunk carries its thought signature; no usage chunk unless asked', () => {
    const lines = chunkLines(`${VERCEL}google/src/__fixtures__/google-tool-call-gemini3.chunks.txt`);
    const signature = atString(JSON.parse(lines[0]!), 'candidates', 0, 'content', 'parts', 0, 'thoughtSignature');
    const enc = new ChatStreamEncoder('client-model', false);
    const out = decodeStream(new GenerateContentStreamDecoder(), lines).map((e) => enc.push(e)).join('') + enc.end();
    expect(frames(out).map((f) => (f === '[DONE]' ? f : at(f, 'choices', 0)))).toEqual([
      { index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null },
      {
        index: 0,
        delta: { tool_calls: [{ index: 0, id: expect.stringMatching(/^call_/), type: 'function', function: { name: 'weather', arguments: '' }, extra_content: { google: { thought_signature: signature } } }] },
        logprobs: null,
        finish_reason: null,
      },
      { index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{"location":"San Francisco"}' } }] }, logprobs: null, finish_reason: null },
      { index: 0, delta: {}, logprobs: null, finish_reason: 'tool_calls' },
      '[DONE]',
    ]);
  });
});
