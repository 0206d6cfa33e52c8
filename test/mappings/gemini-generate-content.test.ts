// server/providers/gemini/generate-content.ts: canonical request → generateContent body, and
// Gemini's answers and alt=sse chunks → canonical, from recorded answers (vercel/ai, Firebase).
import { describe, expect, it } from 'vitest';
import { GenerateContentStreamDecoder, decodeGenerateContentResponse, decodeUsage, encodeGenerateContentBody, mapFinish } from '../../server/providers/gemini/generate-content.ts';
import { UpstreamStreamError } from '../../server/upstream/errors.ts';
import type * as C from '../../server/translate/canonical.ts';
import { FIREBASE, VERCEL, accumulate, at, atString, chunkLines, decodeStream, fixtureJson, request, sseEvents, thrownBy } from './fixtures.ts';
import type * as GeminiWire from '../../server/providers/gemini/wire.ts';

const DIR = `${VERCEL}google/src/__fixtures__/`;
const GOOGLEAI = `${FIREBASE}googleai/`;
const VERTEX = `${FIREBASE}vertexai/`;
const usage = (inputTokens: number, outputTokens: number, cachedTokens = 0, reasoningTokens = 0): C.Usage => ({ inputTokens, outputTokens, cachedTokens, cacheWriteTokens: 0, reasoningTokens });
/** Gemini's function calls have no id: the gateway makes one. */
const madeId = expect.stringMatching(/^call_[0-9A-Za-z]{24}$/);
const sseData = (rel: string) => sseEvents(rel).map((e) => e.data);

describe('mapFinish (Gemini finishReason → canonical)', () => {
  it.each([
    ['STOP', false, 'stop'],
    ['STOP', true, 'tool_calls'],
    ['MAX_TOKENS', false, 'length'],
    ['MAX_TOKENS', true, 'length'],
    ['SAFETY', false, 'content_filter'],
    ['RECITATION', false, 'content_filter'],
    ['BLOCKLIST', false, 'content_filter'],
    ['PROHIBITED_CONTENT', false, 'content_filter'],
    ['SPII', false, 'content_filter'],
    ['IMAGE_SAFETY', false, 'content_filter'],
    [undefined, false, 'stop'],
  ] as const)('%s (function calls: %s) → %s', (reason, hasCalls, expected) => {
    expect(mapFinish(reason, hasCalls)).toBe(expected);
  });
});

describe('decodeUsage', () => {
  it('thoughts are output tokens beside candidatesTokenCount (google-text.json: 9 in, 28 + 244 thought out)', () => {
    expect(decodeUsage(at(fixtureJson(`${DIR}google-text.json`), 'usageMetadata') as Record<string, unknown>)).toEqual(usage(9, 272, 0, 244));
  });

  it('implicit caching: cached tokens are part of promptTokenCount (Vertex: 12013 in of which 11243 cached, 15 + 73 thought out)', () => {
    expect(decodeUsage(at(fixtureJson(`${VERTEX}unary-success-implicit-caching.json`), 'usageMetadata') as Record<string, unknown>)).toEqual(usage(12013, 88, 11243, 73));
  });

  it('code execution: toolUsePromptTokenCount is input too (21 + 160 in, 96 + 86 thought out)', () => {
    expect(decodeUsage(at(fixtureJson(`${GOOGLEAI}unary-success-code-execution.json`), 'usageMetadata') as Record<string, unknown>)).toEqual(usage(181, 182, 0, 86));
  });

  it('is null when there is none', () => {
    expect(decodeUsage(undefined)).toBeNull();
  });

  it('Maps grounding: the tool-use prompt is input beside the prompt (9 + 59 in, 288 + 87 thought out: total 443)', () => {
    const u = at(fixtureJson(`${GOOGLEAI}unary-success-google-maps-grounding.json`), 'usageMetadata') as GeminiWire.UsageMetadata;
    expect(u.totalTokenCount).toBe(443);
    expect(decodeUsage(u)).toEqual(usage(68, 375, 0, 87));
  });

  it('image output is named from candidatesTokensDetails (Vertex gemini-2.5-flash-image: 299 out, 258 of them IMAGE)', () => {
    expect(decodeUsage(at(fixtureJson(`${VERTEX}unary-success-empty-part.json`), 'usageMetadata') as GeminiWire.UsageMetadata)).toEqual({ ...usage(33, 299), imageOutputTokens: 258 });
  });

  it('image input is named from promptTokensDetails (Vertex: 1837 in, 1806 of them IMAGE)', () => {
    expect(decodeUsage(at(fixtureJson(`${VERTEX}unary-success-basic-response-long-usage-metadata.json`), 'usageMetadata') as GeminiWire.UsageMetadata)).toEqual({ ...usage(1837, 76), imageInputTokens: 1806 });
  });

  it('AUDIO apart, VIDEO counted as image input, DOCUMENT as text, the tool-use prompt by modality too (the recorded implicit-caching usage, details rewritten: no recording has them)', () => {
    const u = at(fixtureJson(`${VERTEX}unary-success-implicit-caching.json`), 'usageMetadata') as GeminiWire.UsageMetadata;
    const rewritten: GeminiWire.UsageMetadata = {
      ...u,
      toolUsePromptTokenCount: 100,
      promptTokensDetails: [{ modality: 'TEXT', tokenCount: 9013 }, { modality: 'AUDIO', tokenCount: 1000 }, { modality: 'VIDEO', tokenCount: 1500 }, { modality: 'DOCUMENT', tokenCount: 500 }],
      toolUsePromptTokensDetails: [{ modality: 'IMAGE', tokenCount: 100 }],
      candidatesTokensDetails: [{ modality: 'AUDIO', tokenCount: 15 }],
    };
    expect(decodeUsage(rewritten)).toEqual({ ...usage(12113, 88, 11243, 73), audioInputTokens: 1000, imageInputTokens: 1600, audioOutputTokens: 15 });
  });
});

describe('decodeGenerateContentResponse', () => {
  it('text with a Gemini 3 thought signature on its part (google-text.json)', () => {
    const body = fixtureJson<GeminiWire.GenerateContentResponse>(`${DIR}google-text.json`);
    expect(decodeGenerateContentResponse(body)).toEqual({
      id: 'Un6LacrVMcjUxs0PmJfWoQc',
      model: 'gemini-3-pro-preview',
      content: [{ type: 'text', text: 'There are **3** r\'s in strawberry.\n\nHere is the breakdown: st**r**awbe**rr**y.', thoughtSignature: atString(body, 'candidates', 0, 'content', 'parts', 0, 'thoughtSignature') }],
      finishReason: 'stop',
      stopSequence: null,
      usage: usage(9, 272, 0, 244),
      webSearch: false,
    });
  });

  it('a function call with its thought signature; STOP with a call is tool_calls (google-tool-call.json)', () => {
    const body = fixtureJson<GeminiWire.GenerateContentResponse>(`${DIR}google-tool-call.json`);
    expect(decodeGenerateContentResponse(body)).toEqual({
      id: 'm36LaZGyCLz1xs0PtNSB-QU',
      model: 'gemini-3-pro-preview',
      content: [{ type: 'tool_call', id: madeId, name: 'weather', arguments: '{"location":"San Francisco"}', thoughtSignature: atString(body, 'candidates', 0, 'content', 'parts', 0, 'thoughtSignature') }],
      finishReason: 'tool_calls',
      stopSequence: null,
      usage: usage(29, 908, 0, 893),
      webSearch: false,
    });
  });

  it('a thought summary, then a call without arguments (Firebase googleai, gemini-2.5-pro)', () => {
    const body = fixtureJson<GeminiWire.GenerateContentResponse>(`${GOOGLEAI}unary-success-thinking-function-call-thought-summary-signature.json`);
    expect(decodeGenerateContentResponse(body)).toEqual({
      id: '38CHaLjMG6TujrEPtvTiuQk',
      model: 'gemini-2.5-pro',
      content: [
        { type: 'reasoning', text: atString(body, 'candidates', 0, 'content', 'parts', 0, 'text') },
        { type: 'tool_call', id: madeId, name: 'now', arguments: '{}', thoughtSignature: atString(body, 'candidates', 0, 'content', 'parts', 1, 'thoughtSignature') },
      ],
      finishReason: 'tool_calls',
      stopSequence: null,
      usage: usage(38, 509, 0, 501),
      webSearch: false,
    });
  });

  it('a thought summary, then the answer (Firebase googleai, gemini-2.5-flash)', () => {
    const body = fixtureJson<GeminiWire.GenerateContentResponse>(`${GOOGLEAI}unary-success-thinking-reply-thought-summary.json`);
    expect(decodeGenerateContentResponse(body)).toEqual({
      id: '2pmHaJqQEoqC-8YP6eStyAY',
      model: 'gemini-2.5-flash',
      content: [
        { type: 'reasoning', text: atString(body, 'candidates', 0, 'content', 'parts', 0, 'text') },
        { type: 'text', text: 'Mountain View' },
      ],
      finishReason: 'stop',
      stopSequence: null,
      usage: usage(14, 26, 0, 24),
      webSearch: false,
    });
  });

  it('code execution parts are left out; the text stays (Firebase googleai)', () => {
    expect(decodeGenerateContentResponse(fixtureJson(`${GOOGLEAI}unary-success-code-execution.json`))).toEqual({
      id: '2Uu4aK2pMeOR-8YP-7eXwAQ',
      model: 'gemini-2.5-flash',
      content: [{ type: 'text', text: 'The first 5 prime numbers are 2, 3, 5, 7, and 11.\nThe sum of these numbers is:\n2 + 3 + 5 + 7 + 11 = 28' }],
      finishReason: 'stop',
      stopSequence: null,
      usage: usage(181, 182, 0, 86),
      webSearch: false,
    });
  });

  it('finishReason SAFETY after some text is content_filter (Firebase googleai)', () => {
    const decoded = decodeGenerateContentResponse(fixtureJson(`${GOOGLEAI}unary-failure-finish-reason-safety.json`));
    expect(decoded).toEqual({
      id: expect.stringMatching(/^gen-[0-9A-Za-z]{24}$/),
      model: 'gemini-2.0-flash',
      content: [{ type: 'text', text: 'Safety error incoming in 5, 4, 3, 2...' }],
      finishReason: 'content_filter',
      stopSequence: null,
      usage: usage(7, 20),
      webSearch: false,
    });
  });

  it('a blocked prompt (no candidates, promptFeedback.blockReason) is content_filter with no content (Firebase vertexai)', () => {
    expect(decodeGenerateContentResponse(fixtureJson(`${VERTEX}unary-failure-prompt-blocked-safety.json`))).toEqual({
      id: expect.stringMatching(/^gen-/),
      model: '',
      content: [],
      finishReason: 'content_filter',
      stopSequence: null,
      usage: null,
      webSearch: false,
    });
  });

  it('an answer with neither a candidate nor a block reason has no finish: the upstream failed (Firebase googleai, only promptFeedback)', () => {
    expect(() => decodeGenerateContentResponse(fixtureJson(`${GOOGLEAI}unary-failure-only-prompt-feedback.json`))).toThrow(UpstreamStreamError);
  });
});

describe('GenerateContentStreamDecoder', () => {
  it('text chunks, then an empty part carrying the thought signature (google-text.chunks.txt)', () => {
    const lines = chunkLines(`${DIR}google-text.chunks.txt`);
    expect(decodeStream(new GenerateContentStreamDecoder(), lines)).toEqual([
      { type: 'start', id: 'bH6LaZW8Fp_3nsEPqtaSwQ4', model: 'gemini-3-pro-preview' },
      { type: 'text', text: 'There are **3**' },
      { type: 'text', text: ' "r"s in strawberry.\n\nst**r**awbe**rr**y' },
      { type: 'text_signature', signature: atString(JSON.parse(lines[2]!), 'candidates', 0, 'content', 'parts', 0, 'thoughtSignature') },
      { type: 'finish', reason: 'stop' },
      { type: 'usage', usage: usage(9, 208, 0, 185) },
    ]);
  });

  it('a whole function call in one chunk, the finish in the next (google-tool-call-gemini3.chunks.txt)', () => {
    const lines = chunkLines(`${DIR}google-tool-call-gemini3.chunks.txt`);
    expect(decodeStream(new GenerateContentStreamDecoder(), lines)).toEqual([
      { type: 'start', id: 'QHiLaa6LBrb8vdIPoNztsAg', model: 'gemini-3-pro-preview' },
      { type: 'tool_call_start', index: 0, id: madeId, name: 'weather', thoughtSignature: atString(JSON.parse(lines[0]!), 'candidates', 0, 'content', 'parts', 0, 'thoughtSignature') },
      { type: 'tool_call_delta', index: 0, arguments: '{"location":"San Francisco"}' },
      { type: 'finish', reason: 'tool_calls' },
      { type: 'usage', usage: usage(29, 819, 0, 804) },
    ]);
  });

  it('a raw alt=sse body: the last usageMetadata counts (Firebase googleai streaming-success-basic-reply-short.txt)', () => {
    const events = decodeStream(new GenerateContentStreamDecoder(), sseData(`${GOOGLEAI}streaming-success-basic-reply-short.txt`));
    expect(events).toEqual([
      { type: 'start', id: expect.stringMatching(/^gen-/), model: 'gemini-2.0-flash' },
      { type: 'text', text: 'The' },
      { type: 'text', text: ' capital of Wyoming' },
      { type: 'text', text: ' is **Cheyenne**.\n' },
      { type: 'finish', reason: 'stop' },
      { type: 'usage', usage: usage(7, 10) },
    ]);
  });

  it('thought summaries stream as reasoning, then a call (Firebase googleai, thinking + function call)', () => {
    const data = sseData(`${GOOGLEAI}streaming-success-thinking-function-call-thought-summary-signature.txt`);
    const part = (i: number) => at(JSON.parse(data[i]!), 'candidates', 0, 'content', 'parts', 0);
    const events = decodeStream(new GenerateContentStreamDecoder(), data);
    expect(events).toEqual([
      { type: 'start', id: '48SHaPHpHKbG-8YPtZCawAk', model: 'gemini-2.5-flash' },
      { type: 'reasoning', text: atString(part(0), 'text') },
      { type: 'reasoning', text: atString(part(1), 'text') },
      { type: 'tool_call_start', index: 0, id: madeId, name: 'now', thoughtSignature: atString(part(2), 'thoughtSignature') },
      { type: 'tool_call_delta', index: 0, arguments: '{}' },
      { type: 'finish', reason: 'tool_calls' },
      { type: 'usage', usage: usage(38, 174, 0, 168) },
    ]);
    expect(accumulate(events).content.map((p) => p.type)).toEqual(['reasoning', 'tool_call']);
  });

  it('image output in a stream: the last chunk names it (Firebase googleai streaming-success-empty-parts.txt: 1307 out, 1290 IMAGE)', () => {
    const events = decodeStream(new GenerateContentStreamDecoder(), sseData(`${GOOGLEAI}streaming-success-empty-parts.txt`));
    expect(events.filter((e) => e.type === 'usage')).toEqual([{ type: 'usage', usage: { ...usage(16, 1307), imageOutputTokens: 1290 } }]);
  });

  it('a prompt blocked in the stream ends it with content_filter and no usage (Firebase googleai)', () => {
    expect(decodeStream(new GenerateContentStreamDecoder(), sseData(`${GOOGLEAI}streaming-failure-prompt-blocked-safety.txt`))).toEqual([
      { type: 'start', id: expect.stringMatching(/^gen-/), model: '' },
      { type: 'finish', reason: 'content_filter' },
    ]);
  });

  it("an error object is the upstream's failure (google-429-retry-info.json)", () => {
    const body = fixtureJson(`${DIR}google-429-retry-info.json`);
    const err = thrownBy(() => new GenerateContentStreamDecoder().push({ data: JSON.stringify(body) }));
    expect(err).toBeInstanceOf(UpstreamStreamError);
    expect(err).toMatchObject({ message: atString(body, 'error', 'message'), upstreamType: 'RESOURCE_EXHAUSTED', detail: at(body, 'error') });
  });

  it('a stream without a finish reason was cut', () => {
    const decoder = new GenerateContentStreamDecoder();
    for (const data of chunkLines(`${DIR}google-text.chunks.txt`).slice(0, 2)) decoder.push({ data });
    expect(() => decoder.end()).toThrow(new UpstreamStreamError('the upstream stream ended without a finish reason'));
  });
});

describe('encodeGenerateContentBody', () => {
  const schema = { type: 'object', properties: { answer: { type: 'string' } } };
  const weather = { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } };
  const hi: C.Message[] = [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }];
  const hiWire = [{ role: 'user', parts: [{ text: 'Hi' }] }];

  it('every field in its generateContent place; results matched by name; signatures on their parts; later system text as user text', () => {
    const req = request({
      system: ['Be terse.'],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Weather?' }, { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'iVBOR' } }] },
        {
          role: 'assistant',
          content: [
            { type: 'reasoning', text: 'A thought summary is not sent back.' },
            { type: 'text', text: 'Checking.', thoughtSignature: 'tsig' },
            { type: 'tool_call', id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}', thoughtSignature: 'fsig' },
            { type: 'tool_call', id: 'call_2', name: 'get_time', arguments: '' },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', toolCallId: 'call_1', content: [{ type: 'text', text: '{"temp":21}' }] },
            { type: 'tool_result', toolCallId: 'call_2', content: [{ type: 'text', text: 'timeout' }, { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'AAAA' } }], isError: true },
          ],
        },
        { role: 'system', content: [{ type: 'text', text: 'Be brief.' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'Done.' }] },
      ],
      tools: [weather],
      toolChoice: { name: 'get_weather' },
      maxTokens: 100,
      temperature: 0.5,
      topP: 0.9,
      topK: 40,
      seed: 3,
      presencePenalty: 0.1,
      frequencyPenalty: 0.2,
      stop: ['1', '2', '3', '4', '5', '6'],
      responseFormat: { type: 'json_schema', name: 'answer', schema },
      reasoning: { effort: 'low' },
    });
    expect(encodeGenerateContentBody(req)).toEqual({
      contents: [
        { role: 'user', parts: [{ text: 'Weather?' }, { inlineData: { mimeType: 'image/png', data: 'iVBOR' } }] },
        {
          role: 'model',
          parts: [
            { text: 'Checking.', thoughtSignature: 'tsig' },
            { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'fsig' },
            { functionCall: { name: 'get_time', args: {} } },
          ],
        },
        {
          role: 'user',
          parts: [
            { functionResponse: { name: 'get_weather', response: { temp: 21 } } },
            { functionResponse: { name: 'get_time', response: { error: { result: 'timeout' } } } },
            { inlineData: { mimeType: 'image/png', data: 'AAAA' } },
            { text: '<system>\nBe brief.\n</system>' },
          ],
        },
        { role: 'model', parts: [{ text: 'Done.' }] },
      ],
      systemInstruction: { parts: [{ text: 'Be terse.' }] },
      tools: [{ functionDeclarations: [{ name: 'get_weather', description: 'Weather', parametersJsonSchema: weather.parameters }] }],
      toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] } },
      generationConfig: {
        maxOutputTokens: 100,
        temperature: 0.5,
        topP: 0.9,
        topK: 40,
        seed: 3,
        presencePenalty: 0.1,
        frequencyPenalty: 0.2,
        stopSequences: ['1', '2', '3', '4', '5'],
        responseMimeType: 'application/json',
        responseJsonSchema: schema,
        thinkingConfig: { thinkingBudget: 2048, includeThoughts: true },
      },
    });
  });

  it('tool choice modes, JSON mode, thinking off, and no generationConfig when nothing is set', () => {
    expect(encodeGenerateContentBody(request({ messages: hi }))).toEqual({ contents: hiWire });
    expect(encodeGenerateContentBody(request({ messages: hi, toolChoice: 'auto' }))).toEqual({ contents: hiWire, toolConfig: { functionCallingConfig: { mode: 'AUTO' } } });
    expect(encodeGenerateContentBody(request({ messages: hi, toolChoice: 'none' }))).toEqual({ contents: hiWire, toolConfig: { functionCallingConfig: { mode: 'NONE' } } });
    expect(encodeGenerateContentBody(request({ messages: hi, toolChoice: 'required' }))).toEqual({ contents: hiWire, toolConfig: { functionCallingConfig: { mode: 'ANY' } } });
    expect(encodeGenerateContentBody(request({ messages: hi, responseFormat: { type: 'json_object' }, reasoning: { effort: 'none' } }))).toEqual({
      contents: hiWire,
      generationConfig: { responseMimeType: 'application/json', thinkingConfig: { thinkingBudget: 0 } },
    });
  });

  it('a tool result that is not a JSON object is wrapped as { result }', () => {
    const req = request({
      messages: [
        { role: 'assistant', content: [{ type: 'tool_call', id: 'c1', name: 'count', arguments: '{}' }] },
        { role: 'user', content: [{ type: 'tool_result', toolCallId: 'c1', content: [{ type: 'text', text: '[1,2]' }] }] },
      ],
    });
    expect(encodeGenerateContentBody(req).contents).toEqual([
      { role: 'model', parts: [{ functionCall: { name: 'count', args: {} } }] },
      { role: 'user', parts: [{ functionResponse: { name: 'count', response: { result: [1, 2] } } }] },
    ]);
  });

  it('refuses an image that was not inlined', () => {
    const req = request({ messages: [{ role: 'user', content: [{ type: 'image', source: { kind: 'url', url: 'https://example.com/a.png' } }] }] });
    expect(() => encodeGenerateContentBody(req)).toThrow('Gemini images must be inlined before encoding');
  });
});
