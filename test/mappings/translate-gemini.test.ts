// server/translate/gemini.ts: the Gemini client format. Requests → canonical (exact), answers and
// streams ← canonical (exact text), and round trips through the upstream decoder on recorded
// Gemini answers: what Gemini sent comes back to a Gemini client unchanged.
import { describe, expect, it } from 'vitest';
import { GeminiCountTokensRequest, GeminiGenerateContentRequest, GeminiGenerateContentResponse, GeminiErrorBody } from '../../contract/gemini.ts';
import { GenerateContentStreamDecoder, decodeGenerateContentResponse, decodeUsage } from '../../server/providers/gemini/generate-content.ts';
import type * as GeminiWire from '../../server/providers/gemini/wire.ts';
import { GatewayError, errors } from '../../server/runtime/errors.ts';
import type * as C from '../../server/translate/canonical.ts';
import {
  GEMINI_FIELDS,
  GeminiStreamEncoder,
  canonicalToGemini,
  geminiCountTokensInput,
  geminiErrorBody,
  geminiFinish,
  geminiToCanonical,
  geminiUsage,
  openApiToJsonSchema,
} from '../../server/translate/gemini.ts';
import { FIREBASE, VERCEL, at, chunkLines, decodeStream, fixtureJson, sseEvents } from './fixtures.ts';

const DIR = `${VERCEL}google/src/__fixtures__/`;
const GOOGLEAI = `${FIREBASE}googleai/`;
const VERTEX = `${FIREBASE}vertexai/`;

/** A body as the route has it: validated by the contract. */
const decode = (body: Record<string, unknown>, model = 'up-model', stream = false) => geminiToCanonical(GeminiGenerateContentRequest.parse(body), model, stream);
const user = (text: string) => ({ role: 'user', parts: [{ text }] });
const hi = [user('Hi')];
const hiCanonical: C.Message[] = [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }];
const usage = (inputTokens: number, outputTokens: number, cachedTokens = 0, reasoningTokens = 0): C.Usage => ({ inputTokens, outputTokens, cachedTokens, cacheWriteTokens: 0, reasoningTokens });

describe('geminiToCanonical', () => {
  it('a multi-turn request: system instruction, images, thoughts, signatures, calls and responses, tools, toolConfig, generationConfig', () => {
    const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] };
    const { request, nativeOnly } = decode(
      {
        contents: [
          { role: 'user', parts: [{ text: 'What is in this picture, and the weather in Paris?' }, { inlineData: { mimeType: 'image/png', data: 'iVBOR' } }] },
          {
            role: 'model',
            parts: [
              // Streamed thought chunks as a client keeps them: joined, signed by the chunk with the signature.
              { text: 'The user wants ', thought: true },
              { text: 'two things.', thought: true },
              { text: '', thought: true, thoughtSignature: 'sig-a' },
              { text: 'A cat. Checking the weather.' },
              { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'fsig' },
              { functionCall: { id: 'call_x', name: 'get_time' } },
            ],
          },
          {
            role: 'function',
            parts: [
              { functionResponse: { name: 'get_weather', response: { output: { temp: 21 } } } },
              { functionResponse: { id: 'call_x', name: 'get_time', response: { error: 'clock unavailable' } } },
            ],
          },
          // Gemini's last stream chunk: an empty text part that carries the signature of the text before it.
          { role: 'model', parts: [{ text: 'It is 21°C.' }, { text: '', thoughtSignature: 'tsig' }] },
          { parts: [{ text: 'And a photo from there:' }, { fileData: { mimeType: 'image/jpeg', fileUri: 'https://example.com/paris.jpg' } }] },
        ],
        systemInstruction: { role: 'user', parts: [{ text: 'Be terse.' }, { text: 'Answer in English.' }] },
        tools: [
          {
            functionDeclarations: [
              {
                name: 'get_weather',
                description: 'Weather',
                parameters: {
                  type: 'OBJECT',
                  properties: {
                    city: { type: 'STRING', description: 'City name' },
                    days: { type: 'INTEGER', nullable: true, minimum: 1 },
                    unit: { type: 'STRING', format: 'enum', enum: ['C', 'F'], nullable: true },
                    tags: { type: 'ARRAY', items: { type: 'STRING' }, minItems: '1' },
                  },
                  required: ['city'],
                  propertyOrdering: ['city', 'days', 'unit', 'tags'],
                },
              },
              { name: 'get_time', parametersJsonSchema: { type: 'object', properties: { zone: { type: ['string', 'null'] } } } },
            ],
          },
          { googleSearch: {} },
        ],
        toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] } },
        generationConfig: {
          temperature: 0.5,
          topP: 0.9,
          topK: 40,
          maxOutputTokens: 1000,
          stopSequences: ['END'],
          seed: 7,
          presencePenalty: 0.1,
          frequencyPenalty: 0.2,
          candidateCount: 1,
          responseMimeType: 'application/json',
          responseJsonSchema: schema,
          responseModalities: ['TEXT'],
          thinkingConfig: { thinkingBudget: 2048, includeThoughts: true },
        },
        safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }],
        temprature: 1,
      },
      'claude-sonnet-4-5',
      true,
    );
    expect(nativeOnly).toBeNull();
    expect(request).toEqual({
      model: 'claude-sonnet-4-5',
      system: ['Be terse.', 'Answer in English.'],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is in this picture, and the weather in Paris?' },
            { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'iVBOR' } },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'reasoning', text: 'The user wants two things.', signature: 'sig-a' },
            { type: 'text', text: 'A cat. Checking the weather.' },
            { type: 'tool_call', id: 'call_get_weather_0', name: 'get_weather', arguments: '{"city":"Paris"}', thoughtSignature: 'fsig' },
            { type: 'tool_call', id: 'call_x', name: 'get_time', arguments: '{}' },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', toolCallId: 'call_get_weather_0', name: 'get_weather', content: [{ type: 'text', text: '{"temp":21}' }] },
            { type: 'tool_result', toolCallId: 'call_x', name: 'get_time', content: [{ type: 'text', text: 'clock unavailable' }], isError: true },
          ],
        },
        { role: 'assistant', content: [{ type: 'text', text: 'It is 21°C.', thoughtSignature: 'tsig' }] },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'And a photo from there:' },
            { type: 'image', source: { kind: 'url', url: 'https://example.com/paris.jpg' } },
          ],
        },
      ],
      tools: [
        {
          name: 'get_weather',
          description: 'Weather',
          parameters: {
            type: 'object',
            properties: {
              city: { type: 'string', description: 'City name' },
              days: { type: ['integer', 'null'], minimum: 1 },
              unit: { type: ['string', 'null'], format: 'enum', enum: ['C', 'F', null] },
              tags: { type: 'array', items: { type: 'string' }, minItems: 1 },
            },
            required: ['city'],
          },
        },
        { name: 'get_time', parameters: { type: 'object', properties: { zone: { type: ['string', 'null'] } } } },
      ],
      toolChoice: { name: 'get_weather' },
      maxTokens: 1000,
      temperature: 0.5,
      topP: 0.9,
      topK: 40,
      seed: 7,
      presencePenalty: 0.1,
      frequencyPenalty: 0.2,
      stop: ['END'],
      reasoning: { budgetTokens: 2048, effort: 'low' },
      responseFormat: { type: 'json_schema', name: 'response', schema, param: 'generationConfig.responseJsonSchema' },
      stream: true,
      webSearch: true,
      untranslated: ['safetySettings'],
      unknownFields: [{ name: 'temprature', meant: [...GEMINI_FIELDS.translated, ...GEMINI_FIELDS.known] }],
    });
  });

  it('a bare string system instruction; empty parts and turns left out; no tools, no choice, no web search', () => {
    const { request, nativeOnly } = decode({ systemInstruction: 'Be brief.', contents: [user('Hi'), { role: 'model', parts: [{ text: '' }] }, user('Again')] });
    expect(nativeOnly).toBeNull();
    expect(request).toEqual({
      model: 'up-model',
      system: ['Be brief.'],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }, { type: 'text', text: 'Again' }] }],
      stream: false,
      webSearch: false,
    });
  });

  it.each([
    [{ thinkingBudget: 0 }, { effort: 'none' }],
    [{ thinkingBudget: -1, includeThoughts: true }, { effort: 'high', adaptive: true }],
    [{ thinkingBudget: 20000 }, { budgetTokens: 20000, effort: 'high' }],
    [{ thinkingBudget: 20000, thinkingLevel: 'low' }, { budgetTokens: 20000, effort: 'low' }],
    [{ thinkingLevel: 'MINIMAL' }, { effort: 'minimal' }],
    [{ thinkingLevel: 'medium', includeThoughts: true }, { effort: 'medium' }],
    [{ includeThoughts: true }, undefined],
  ])('thinkingConfig %j → reasoning %j', (thinkingConfig, reasoning) => {
    expect(decode({ contents: hi, generationConfig: { thinkingConfig } }).request.reasoning).toEqual(reasoning);
  });

  it.each([
    [{ mode: 'AUTO' }, 'auto'],
    [{ mode: 'VALIDATED' }, 'auto'],
    [{ mode: 'NONE' }, 'none'],
    [{ mode: 'ANY' }, 'required'],
    [{ mode: 'any', allowedFunctionNames: ['b'] }, { name: 'b' }],
    [{}, undefined],
  ])('functionCallingConfig %j → toolChoice %j (every tool offered)', (functionCallingConfig, toolChoice) => {
    const { request } = decode({ contents: hi, tools: [{ functionDeclarations: [{ name: 'a' }, { name: 'b' }] }], toolConfig: { functionCallingConfig } });
    expect(request.toolChoice).toEqual(toolChoice);
    expect(request.tools?.map((t) => t.name)).toEqual(['a', 'b']);
  });

  it('ANY with several allowed functions offers only those; toolConfig fields other than functionCallingConfig are named', () => {
    const params = { type: 'object', properties: {} };
    const { request } = decode({
      contents: hi,
      tools: [{ functionDeclarations: [{ name: 'a' }, { name: 'b' }, { name: 'c' }] }],
      toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['a', 'c'] }, retrievalConfig: { latLng: { latitude: 1, longitude: 2 } } },
    });
    expect(request.tools).toEqual([
      { name: 'a', parameters: params },
      { name: 'c', parameters: params },
    ]);
    expect(request.toolChoice).toBe('required');
    expect(request.untranslated).toEqual(['toolConfig.retrievalConfig']);
  });

  it('responseSchema (OpenAPI) is converted; JSON without a schema is json_object; text/x.enum and a schema without the JSON type are named', () => {
    const responseSchema = { type: 'OBJECT', properties: { n: { type: 'NUMBER', nullable: true } }, propertyOrdering: ['n'] };
    expect(decode({ contents: hi, generationConfig: { responseMimeType: 'application/json', responseSchema } }).request.responseFormat).toEqual({
      type: 'json_schema',
      name: 'response',
      schema: { type: 'object', properties: { n: { type: ['number', 'null'] } } },
      param: 'generationConfig.responseSchema',
    });
    expect(decode({ contents: hi, generationConfig: { responseMimeType: 'application/json' } }).request.responseFormat).toEqual({ type: 'json_object', param: 'generationConfig.responseMimeType' });
    const enumOut = decode({ contents: hi, generationConfig: { responseMimeType: 'text/x.enum', responseSchema: { type: 'STRING', enum: ['a', 'b'] } } }).request;
    expect([enumOut.responseFormat, enumOut.untranslated]).toEqual([undefined, ['generationConfig.responseMimeType']]);
    const noMime = decode({ contents: hi, generationConfig: { responseSchema } }).request;
    expect([noMime.responseFormat, noMime.untranslated]).toEqual([undefined, ['generationConfig.responseSchema']]);
  });

  it('generationConfig fields other models lack are named (image output, speech, logprobs); known top-level fields too', () => {
    const { request } = decode({
      contents: hi,
      generationConfig: { responseModalities: ['TEXT', 'IMAGE'], speechConfig: { voiceConfig: {} }, responseLogprobs: true, temperature: 1 },
      cachedContent: 'cachedContents/abc',
      labels: { team: 'a' },
    });
    expect(request.untranslated).toEqual(['cachedContent', 'labels', 'generationConfig.responseModalities', 'generationConfig.speechConfig', 'generationConfig.responseLogprobs']);
    expect(request.temperature).toBe(1);
  });

  it('function responses without ids answer the earliest unanswered call of their name; {output}/{result}/{error} are unwrapped', () => {
    const { request } = decode({
      contents: [
        user('Look twice'),
        {
          role: 'model',
          parts: [
            { functionCall: { name: 'look', args: { n: 1 } } },
            { functionCall: { name: 'look', args: { n: 2 } } },
            { functionCall: { name: 'list.files' } },
            { functionCall: { name: 'raw' } },
          ],
        },
        {
          role: 'user',
          parts: [
            { functionResponse: { name: 'look', response: { result: [1, 2] } } },
            { functionResponse: { name: 'look', response: { error: { result: 'denied' } } } },
            { functionResponse: { name: 'list.files', response: { output: 'a.txt' }, parts: [{ inlineData: { mimeType: 'image/jpg', data: 'AAAA' } }] } },
            { functionResponse: { name: 'raw' } },
            { functionResponse: { name: 'orphan', response: { a: 1, b: 2 } } },
          ],
        },
      ],
    });
    expect(request.messages.slice(1)).toEqual([
      {
        role: 'assistant',
        content: [
          { type: 'tool_call', id: 'call_look_0', name: 'look', arguments: '{"n":1}' },
          { type: 'tool_call', id: 'call_look_1', name: 'look', arguments: '{"n":2}' },
          { type: 'tool_call', id: 'call_list_files_2', name: 'list.files', arguments: '{}' },
          { type: 'tool_call', id: 'call_raw_3', name: 'raw', arguments: '{}' },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', toolCallId: 'call_look_0', name: 'look', content: [{ type: 'text', text: '[1,2]' }] },
          { type: 'tool_result', toolCallId: 'call_look_1', name: 'look', content: [{ type: 'text', text: 'denied' }], isError: true },
          {
            type: 'tool_result',
            toolCallId: 'call_list_files_2',
            name: 'list.files',
            content: [
              { type: 'text', text: 'a.txt' },
              { type: 'image', source: { kind: 'base64', mediaType: 'image/jpeg', data: 'AAAA' } },
            ],
          },
          { type: 'tool_result', toolCallId: 'call_raw_3', name: 'raw', content: [{ type: 'text', text: '{}' }] },
          { type: 'tool_result', toolCallId: 'call_orphan_4', name: 'orphan', content: [{ type: 'text', text: '{"a":1,"b":2}' }] },
        ],
      },
    ]);
  });

  it('ids are stable: the same conversation decodes to the same ids on every turn', () => {
    const body = { contents: [user('Go'), { role: 'model', parts: [{ functionCall: { name: 'go' } }] }, { role: 'user', parts: [{ functionResponse: { name: 'go', response: {} } }] }] };
    expect(decode(body).request.messages).toEqual(decode(body).request.messages);
  });

  describe('what only Gemini models take: a 400 naming the field, for the other models (nativeOnly)', () => {
    const refused = (body: Record<string, unknown>) => {
      const { nativeOnly } = decode(body);
      expect(nativeOnly).toBeInstanceOf(GatewayError);
      return { status: nativeOnly?.status, type: nativeOnly?.type, code: nativeOnly?.code, param: nativeOnly?.param, message: nativeOnly?.message };
    };

    it('candidateCount above 1', () => {
      expect(refused({ contents: hi, generationConfig: { candidateCount: 2 } })).toEqual({
        status: 400,
        type: 'invalid_request_error',
        code: 'invalid_parameter',
        param: 'generationConfig.candidateCount',
        message: 'Only Gemini models can generate more than one candidate.',
      });
    });

    it('inline audio (and the rest of the request is still decoded)', () => {
      const body = { contents: [user('a'), { role: 'model', parts: [{ text: 'b' }] }, { role: 'user', parts: [{ inlineData: { mimeType: 'audio/wav', data: 'UklG' } }, { text: 'What is said?' }] }] };
      expect(refused(body)).toEqual({ status: 400, type: 'invalid_request_error', code: 'invalid_parameter', param: 'contents[2].parts[0].inlineData', message: 'audio/wav data can only be sent to Gemini models.' });
      expect(decode(body).request.messages[2]).toEqual({ role: 'user', content: [{ type: 'text', text: 'What is said?' }] });
    });

    it.each([
      [{ contents: [{ parts: [{ text: 'Read' }, { inlineData: { mimeType: 'application/pdf', data: 'JVBE' } }] }] }, 'contents[0].parts[1].inlineData'],
      [{ contents: [{ parts: [{ inlineData: { mimeType: 'image/heic', data: 'AAAA' } }] }] }, 'contents[0].parts[0].inlineData'],
      [{ contents: [{ parts: [{ fileData: { mimeType: 'image/png', fileUri: 'https://generativelanguage.googleapis.com/v1beta/files/abc' } }] }] }, 'contents[0].parts[0].fileData'],
      [{ contents: [{ parts: [{ fileData: { mimeType: 'image/png', fileUri: 'gs://bucket/a.png' } }] }] }, 'contents[0].parts[0].fileData'],
      [{ contents: [{ parts: [{ fileData: { mimeType: 'video/mp4', fileUri: 'https://www.youtube.com/watch?v=x' } }] }] }, 'contents[0].parts[0].fileData'],
      [{ contents: [{ parts: [{ fileData: { fileUri: 'https://example.com/page.html' } }] }] }, 'contents[0].parts[0].fileData'],
      [{ contents: [user('Sum'), { role: 'model', parts: [{ executableCode: { language: 'PYTHON', code: 'print(1)' } }] }] }, 'contents[1].parts[0].executableCode'],
      [{ contents: [user('Sum'), { role: 'model', parts: [{ codeExecutionResult: { outcome: 'OUTCOME_OK' } }] }] }, 'contents[1].parts[0].codeExecutionResult'],
      [{ contents: hi, tools: [{ googleSearch: {} }, { codeExecution: {} }] }, 'tools[1].codeExecution'],
      [{ contents: hi, tools: [{ urlContext: {} }] }, 'tools[0].urlContext'],
      [{ contents: hi, systemInstruction: { parts: [{ inlineData: { mimeType: 'image/png', data: 'AAAA' } }] } }, 'systemInstruction.parts[0]'],
      [{ contents: [{ parts: [{ functionResponse: { name: 'f', response: {}, parts: [{ inlineData: { mimeType: 'application/pdf', data: 'JVBE' } }] } }] }] }, 'contents[0].parts[0].functionResponse.parts[0].inlineData'],
    ])('%j → %s', (body, param) => {
      expect(refused(body)).toMatchObject({ status: 400, code: 'invalid_parameter', param });
    });

    it('the first such field is the one named', () => {
      expect(refused({ contents: [{ parts: [{ inlineData: { mimeType: 'audio/wav', data: 'UklG' } }] }], tools: [{ codeExecution: {} }] })).toMatchObject({ param: 'contents[0].parts[0].inlineData' });
    });
  });
});

describe('the contract', () => {
  it('takes the enums in either case and refuses other values', () => {
    expect(GeminiGenerateContentRequest.safeParse({ contents: hi, toolConfig: { functionCallingConfig: { mode: 'any' } }, generationConfig: { thinkingConfig: { thinkingLevel: 'low' } } }).success).toBe(true);
    const bad = GeminiGenerateContentRequest.safeParse({ contents: hi, toolConfig: { functionCallingConfig: { mode: 'SOMETIMES' } } });
    expect(bad.success ? null : bad.error.issues[0]?.path).toEqual(['toolConfig', 'functionCallingConfig', 'mode']);
  });

  it('needs contents; a count needs contents or a generateContentRequest', () => {
    expect(GeminiGenerateContentRequest.safeParse({ contents: [] }).success).toBe(false);
    expect(GeminiCountTokensRequest.safeParse({}).success).toBe(false);
    expect(GeminiCountTokensRequest.safeParse({ contents: hi }).success).toBe(true);
  });

  it('describes the recorded answers, and what the encoders write', () => {
    for (const rel of [`${DIR}google-text.json`, `${DIR}google-tool-call.json`, `${GOOGLEAI}unary-success-thinking-function-call-thought-summary-signature.json`, `${VERTEX}unary-success-implicit-caching.json`]) {
      expect(GeminiGenerateContentResponse.safeParse(fixtureJson(rel)).success).toBe(true);
    }
    expect(GeminiErrorBody.safeParse(geminiErrorBody(400, 'Bad.', 'contents')).success).toBe(true);
  });
});

describe('geminiCountTokensInput', () => {
  it('is the generateContentRequest when there is one, else the contents', () => {
    const inner = { model: 'models/x', contents: hi, systemInstruction: 'Be brief.' };
    expect(geminiCountTokensInput(GeminiCountTokensRequest.parse({ generateContentRequest: inner }))).toEqual(inner);
    expect(geminiCountTokensInput(GeminiCountTokensRequest.parse({ contents: hi }))).toEqual({ contents: hi });
    expect(geminiToCanonical(geminiCountTokensInput(GeminiCountTokensRequest.parse({ contents: hi })), 'm', false).request.messages).toEqual(hiCanonical);
  });
});

describe('openApiToJsonSchema', () => {
  it('nullable without a type joins anyOf; TYPE_UNSPECIFIED is no type; every other keyword is kept', () => {
    expect(
      openApiToJsonSchema({
        anyOf: [{ type: 'STRING' }, { type: 'INTEGER', maximum: 3 }],
        nullable: true,
        title: 'T',
        default: 'x',
        example: 'y',
        maxLength: '9',
      }),
    ).toEqual({ anyOf: [{ type: 'string' }, { type: 'integer', maximum: 3 }, { type: 'null' }], title: 'T', default: 'x', example: 'y', maxLength: 9 });
    expect(openApiToJsonSchema({ type: 'TYPE_UNSPECIFIED', description: 'any' })).toEqual({ description: 'any' });
  });
});

describe('geminiFinish', () => {
  it.each([
    ['stop', false, 'STOP'],
    ['tool_calls', true, 'STOP'],
    ['tool_calls', false, 'MALFORMED_FUNCTION_CALL'],
    ['length', true, 'MAX_TOKENS'],
    ['content_filter', false, 'SAFETY'],
    ['refusal', false, 'SAFETY'],
    ['pause', false, 'STOP'],
  ] as const)('%s (function calls: %s) → %s', (reason, hasCalls, expected) => {
    expect(geminiFinish(reason, hasCalls)).toBe(expected);
  });
});

describe('geminiUsage', () => {
  it('thoughts beside the candidates, cached tokens inside the prompt, and named only when there are some', () => {
    expect(geminiUsage(usage(12013, 88, 11243, 73))).toEqual({ promptTokenCount: 12013, candidatesTokenCount: 15, totalTokenCount: 12101, cachedContentTokenCount: 11243, thoughtsTokenCount: 73 });
    expect(geminiUsage(usage(7, 10))).toEqual({ promptTokenCount: 7, candidatesTokenCount: 10, totalTokenCount: 17 });
    expect(geminiUsage(null)).toEqual({ promptTokenCount: 0, candidatesTokenCount: 0, totalTokenCount: 0 });
  });

  it('is the exact inverse of the upstream decoder', () => {
    for (const u of [usage(12013, 88, 11243, 73), usage(9, 272, 0, 244), usage(7, 10), usage(0, 0)]) expect(decodeUsage(geminiUsage(u))).toEqual(u);
  });

  it('the prompt and candidates by modality when audio or images were reported; round trip of recorded image usages (Vertex)', () => {
    for (const f of ['unary-success-empty-part.json', 'unary-success-basic-response-long-usage-metadata.json']) {
      const decoded = decodeUsage(at(fixtureJson(`${VERTEX}${f}`), 'usageMetadata') as GeminiWire.UsageMetadata)!;
      expect(decodeUsage(geminiUsage(decoded))).toEqual(decoded);
    }
    const imageOut = decodeUsage(at(fixtureJson(`${VERTEX}unary-success-empty-part.json`), 'usageMetadata') as GeminiWire.UsageMetadata);
    expect(geminiUsage(imageOut)).toEqual({
      promptTokenCount: 33,
      candidatesTokenCount: 299,
      totalTokenCount: 332,
      candidatesTokensDetails: [
        { modality: 'TEXT', tokenCount: 41 },
        { modality: 'IMAGE', tokenCount: 258 },
      ],
    });
  });

  it("an OpenAI answer's audio in and out, with reasoning: TEXT is what the other parts leave (its thoughts apart)", () => {
    expect(geminiUsage({ ...usage(1000, 500, 200, 100), audioInputTokens: 300, imageInputTokens: 0, audioOutputTokens: 150 })).toEqual({
      promptTokenCount: 1000,
      candidatesTokenCount: 400,
      totalTokenCount: 1500,
      cachedContentTokenCount: 200,
      thoughtsTokenCount: 100,
      promptTokensDetails: [
        { modality: 'TEXT', tokenCount: 700 },
        { modality: 'AUDIO', tokenCount: 300 },
      ],
      candidatesTokensDetails: [
        { modality: 'TEXT', tokenCount: 250 },
        { modality: 'AUDIO', tokenCount: 150 },
      ],
    });
  });
});

describe('canonicalToGemini', () => {
  it('one candidate: thoughts, text and calls in order, signatures on their parts, redacted thinking left out', () => {
    const r: C.Response = {
      id: 'msg_1',
      model: 'claude-x',
      content: [
        { type: 'reasoning', text: 'Hmm.', signature: 'sig-a' },
        { type: 'reasoning', text: '', redactedData: 'opaque' },
        { type: 'reasoning', text: 'Unsigned.' },
        { type: 'text', text: 'Checking.' },
        { type: 'text', text: '' },
        { type: 'tool_call', id: 'toolu_1', name: 'get_weather', arguments: '{"city":"Paris"}', thoughtSignature: 'fsig' },
        { type: 'tool_call', id: 'toolu_2', name: 'now', arguments: '' },
      ],
      finishReason: 'tool_calls',
      usage: usage(100, 50, 20, 10),
    };
    expect(canonicalToGemini(r, 'claude-sonnet-4-5')).toEqual({
      candidates: [
        {
          content: {
            parts: [
              { text: 'Hmm.', thought: true, thoughtSignature: 'sig-a' },
              { text: 'Unsigned.', thought: true },
              { text: 'Checking.' },
              { functionCall: { id: 'toolu_1', name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'fsig' },
              { functionCall: { id: 'toolu_2', name: 'now', args: {} } },
            ],
            role: 'model',
          },
          finishReason: 'STOP',
          index: 0,
        },
      ],
      usageMetadata: { promptTokenCount: 100, candidatesTokenCount: 40, totalTokenCount: 150, cachedContentTokenCount: 20, thoughtsTokenCount: 10 },
      modelVersion: 'claude-sonnet-4-5',
      responseId: 'msg_1',
    });
  });

  describe('round trip of recorded Gemini answers: upstream decoder, then this encoder, gives back what Gemini sent', () => {
    /** The recorded usage without the per-modality breakdowns, which the hub does not keep. */
    const countsOf = (u: unknown) => {
      const { promptTokensDetails: _p, cacheTokensDetails: _c, candidatesTokensDetails: _d, ...counts } = u as Record<string, unknown>;
      return counts;
    };
    /** Function calls come back with the id the decoder gave them (Gemini sent none). */
    const withIds = (parts: GeminiWire.Part[]) => parts.map((p) => (p.functionCall ? { ...p, functionCall: { ...p.functionCall, id: expect.stringMatching(/^call_[0-9A-Za-z]{24}$/) } } : p));

    it.each([
      `${DIR}google-text.json`,
      `${DIR}google-tool-call.json`,
      `${DIR}google-reasoning-gemini3.json`,
      `${GOOGLEAI}unary-success-thinking-function-call-thought-summary-signature.json`,
      `${GOOGLEAI}unary-success-thinking-reply-thought-summary.json`,
      `${GOOGLEAI}unary-success-basic-reply-short.json`,
      `${VERTEX}unary-success-implicit-caching.json`,
    ])('%s', (rel) => {
      const recorded = fixtureJson<GeminiWire.GenerateContentResponse>(rel);
      const cand = recorded.candidates![0]!;
      const out = canonicalToGemini(decodeGenerateContentResponse(recorded), recorded.modelVersion!);
      expect(out).toEqual({
        candidates: [{ content: { parts: withIds(cand.content!.parts!), role: 'model' }, finishReason: cand.finishReason, index: 0 }],
        usageMetadata: countsOf(recorded.usageMetadata),
        modelVersion: recorded.modelVersion,
        responseId: recorded.responseId ?? expect.stringMatching(/^gen-/),
      });
    });
  });
});

describe('GeminiStreamEncoder', () => {
  const model = 'claude-sonnet-4-5';
  const events: C.StreamEvent[] = [
    { type: 'start', id: 'msg_1', model: 'claude-x' },
    { type: 'reasoning', text: 'Let me think.' },
    { type: 'reasoning_signature', signature: 'sig-r' },
    { type: 'text', text: 'Hello' },
    { type: 'text', text: '' },
    { type: 'text', text: ', world.' },
    { type: 'tool_call_start', index: 2, id: 'toolu_1', name: 'get_weather' },
    { type: 'tool_call_delta', index: 2, arguments: '{"city":' },
    { type: 'tool_call_start', index: 3, id: 'toolu_2', name: 'now', thoughtSignature: 'fsig' },
    { type: 'tool_call_delta', index: 2, arguments: '"Paris"}' },
    { type: 'finish', reason: 'tool_calls' },
    { type: 'usage', usage: usage(100, 50, 20, 10) },
  ];
  const chunks = [
    '{"candidates":[{"content":{"parts":[{"text":"Let me think.","thought":true}],"role":"model"},"index":0}],"modelVersion":"claude-sonnet-4-5","responseId":"msg_1"}',
    '{"candidates":[{"content":{"parts":[{"text":"","thought":true,"thoughtSignature":"sig-r"}],"role":"model"},"index":0}],"modelVersion":"claude-sonnet-4-5","responseId":"msg_1"}',
    '{"candidates":[{"content":{"parts":[{"text":"Hello"}],"role":"model"},"index":0}],"modelVersion":"claude-sonnet-4-5","responseId":"msg_1"}',
    '{"candidates":[{"content":{"parts":[{"text":", world."}],"role":"model"},"index":0}],"modelVersion":"claude-sonnet-4-5","responseId":"msg_1"}',
    '{"candidates":[{"content":{"parts":[{"functionCall":{"id":"toolu_1","name":"get_weather","args":{"city":"Paris"}}}],"role":"model"},"index":0}],"modelVersion":"claude-sonnet-4-5","responseId":"msg_1"}',
    '{"candidates":[{"content":{"parts":[{"functionCall":{"id":"toolu_2","name":"now","args":{}},"thoughtSignature":"fsig"}],"role":"model"},"index":0}],"modelVersion":"claude-sonnet-4-5","responseId":"msg_1"}',
    '{"candidates":[{"content":{"parts":[{"text":""}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":100,"candidatesTokenCount":40,"totalTokenCount":150,"cachedContentTokenCount":20,"thoughtsTokenCount":10},"modelVersion":"claude-sonnet-4-5","responseId":"msg_1"}',
  ];
  const run = (enc: GeminiStreamEncoder, evs: readonly C.StreamEvent[]) => evs.map((e) => enc.push(e)).join('') + enc.end();

  it('sse: data frames with CRLF CRLF; calls buffered until complete, each in one chunk; finish and usage last', () => {
    expect(run(new GeminiStreamEncoder(model, 'sse'), events)).toBe(chunks.map((c) => `data: ${c}\r\n\r\n`).join(''));
  });

  it('json-array: one JSON array of the same chunks', () => {
    expect(run(new GeminiStreamEncoder(model, 'json-array'), events)).toBe(`[${chunks.join(',\r\n')}]`);
  });

  it('writes nothing for a call until the call is complete (the next part, the finish or the end)', () => {
    const enc = new GeminiStreamEncoder(model, 'sse');
    expect([
      enc.push({ type: 'start', id: 'r', model: 'm' }),
      enc.push({ type: 'tool_call_start', index: 0, id: 'c', name: 'f' }),
      enc.push({ type: 'tool_call_delta', index: 0, arguments: '{"a":1}' }),
    ]).toEqual(['', '', '']);
    expect(enc.push({ type: 'text', text: 'Done.' })).toBe(
      'data: {"candidates":[{"content":{"parts":[{"functionCall":{"id":"c","name":"f","args":{"a":1}}}],"role":"model"},"index":0}],"modelVersion":"claude-sonnet-4-5","responseId":"r"}\r\n\r\n' +
        'data: {"candidates":[{"content":{"parts":[{"text":"Done."}],"role":"model"},"index":0}],"modelVersion":"claude-sonnet-4-5","responseId":"r"}\r\n\r\n',
    );
  });

  it('an empty stream is still a finished answer: [] with the last chunk', () => {
    const end = new GeminiStreamEncoder(model, 'json-array').end();
    expect(JSON.parse(end)).toEqual([
      { candidates: [{ content: { parts: [{ text: '' }], role: 'model' }, finishReason: 'STOP', index: 0 }], usageMetadata: { promptTokenCount: 0, candidatesTokenCount: 0, totalTokenCount: 0 }, modelVersion: model, responseId: expect.stringMatching(/^gen-[0-9A-Za-z]{24}$/) },
    ]);
  });

  it('a failure ends the stream with one error chunk (google.rpc.Status); nothing after it', () => {
    const err = errors.invalid('Bad value.', 'generationConfig.temperature');
    const sse = new GeminiStreamEncoder(model, 'sse');
    sse.push({ type: 'start', id: 'r', model: 'm' });
    expect(sse.push({ type: 'text', text: 'Hi' }) + sse.fail(err) + sse.end() + sse.push({ type: 'text', text: 'late' })).toBe(
      'data: {"candidates":[{"content":{"parts":[{"text":"Hi"}],"role":"model"},"index":0}],"modelVersion":"claude-sonnet-4-5","responseId":"r"}\r\n\r\n' +
        'data: {"error":{"code":400,"message":"Bad value.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"invalid_parameter","domain":"model-gateway"},{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"generationConfig.temperature","description":"Bad value."}]}]}}\r\n\r\n',
    );
    const arr = new GeminiStreamEncoder(model, 'json-array');
    const upstreamDown = new GatewayError(502, 'provider_error', 'upstream_error', 'The upstream failed.');
    expect(arr.push({ type: 'start', id: 'r', model: 'm' }) + arr.push({ type: 'text', text: 'Hi' }) + arr.fail(upstreamDown)).toBe(
      '[{"candidates":[{"content":{"parts":[{"text":"Hi"}],"role":"model"},"index":0}],"modelVersion":"claude-sonnet-4-5","responseId":"r"},\r\n' +
        '{"error":{"code":502,"message":"The upstream failed.","status":"UNAVAILABLE","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"upstream_error","domain":"model-gateway"}]}}]',
    );
    expect(new GeminiStreamEncoder(model, 'json-array').fail(upstreamDown)).toBe(
      '[{"error":{"code":502,"message":"The upstream failed.","status":"UNAVAILABLE","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"upstream_error","domain":"model-gateway"}]}}]',
    );
  });

  describe('round trip of recorded Gemini streams: upstream decoder, this encoder, upstream decoder again', () => {
    const reencode = (payloads: readonly string[], modelVersion: string) => {
      const events = decodeStream(new GenerateContentStreamDecoder(), payloads);
      const enc = new GeminiStreamEncoder(modelVersion, 'sse');
      const sse = events.map((e) => enc.push(e)).join('') + enc.end();
      const frames = sse.split('\r\n\r\n').filter((f) => f !== '').map((f) => f.replace(/^data: /, ''));
      return { events, frames };
    };

    it.each([
      [`${DIR}google-text.chunks.txt`, 'gemini-3-pro-preview'],
      [`${DIR}google-tool-call-gemini3.chunks.txt`, 'gemini-3-pro-preview'],
      [`${DIR}google-reasoning.chunks.txt`, 'gemini-3-pro-preview'],
    ])('%s decodes to the same events', (rel, modelVersion) => {
      const { events, frames } = reencode(chunkLines(rel), modelVersion);
      expect(decodeStream(new GenerateContentStreamDecoder(), frames)).toEqual(events);
    });

    it('Firebase thinking + function call (raw alt=sse): the same events, and the recorded parts chunk by chunk', () => {
      const recorded = sseEvents(`${GOOGLEAI}streaming-success-thinking-function-call-thought-summary-signature.txt`).map((e) => e.data);
      const { events, frames } = reencode(recorded, 'gemini-2.5-flash');
      expect(decodeStream(new GenerateContentStreamDecoder(), frames)).toEqual(events);
      const partsOf = (data: string) => at(JSON.parse(data), 'candidates', 0, 'content', 'parts');
      const call = at(JSON.parse(recorded[2]!), 'candidates', 0, 'content', 'parts', 0) as GeminiWire.Part;
      expect(frames.map(partsOf)).toEqual([
        partsOf(recorded[0]!),
        partsOf(recorded[1]!),
        [{ ...call, functionCall: { ...call.functionCall, id: expect.stringMatching(/^call_/) } }],
        [{ text: '' }],
      ]);
      const last = JSON.parse(recorded[recorded.length - 1]!);
      const { promptTokensDetails: _p, ...counts } = last.usageMetadata;
      expect(at(JSON.parse(frames[frames.length - 1]!), 'usageMetadata')).toEqual(counts);
      expect(at(JSON.parse(frames[frames.length - 1]!), 'candidates', 0, 'finishReason')).toBe('STOP');
    });
  });
});

describe('geminiErrorBody', () => {
  it.each([
    [400, 'INVALID_ARGUMENT'],
    [401, 'UNAUTHENTICATED'],
    [403, 'PERMISSION_DENIED'],
    [404, 'NOT_FOUND'],
    [409, 'ABORTED'],
    [413, 'INVALID_ARGUMENT'],
    [415, 'INVALID_ARGUMENT'],
    [429, 'RESOURCE_EXHAUSTED'],
    [499, 'CANCELLED'],
    [500, 'INTERNAL'],
    [501, 'UNIMPLEMENTED'],
    [502, 'UNAVAILABLE'],
    [503, 'UNAVAILABLE'],
    [504, 'DEADLINE_EXCEEDED'],
    [524, 'DEADLINE_EXCEEDED'],
    [599, 'UNKNOWN'],
  ])('%i → %s', (status, rpc) => {
    expect(geminiErrorBody(status, 'Why.')).toEqual({ error: { code: status, message: 'Why.', status: rpc } });
  });

  it('a field at fault is a BadRequest field violation', () => {
    expect(geminiErrorBody(400, "Invalid 'contents'.", 'contents')).toEqual({
      error: {
        code: 400,
        message: "Invalid 'contents'.",
        status: 'INVALID_ARGUMENT',
        details: [{ '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: [{ field: 'contents', description: "Invalid 'contents'." }] }],
      },
    });
  });
});
