// Gemini's own API as a client format, through Google's SDK (@google/genai, pinned in
// package.json) on every upstream type: generateContent, generateContentStream, countTokens, a
// function-calling round trip, the catalog in Gemini's shape, and errors in Google's shape. Gemini
// upstreams get the body as sent; the others a translation, and the answers come back translated.
import { ApiError, GoogleGenAI, type Content, type GenerateContentResponse } from '@google/genai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replayed } from '../helpers/replayed-answers.ts';
import { PROVIDERS, startTextGateway } from '../helpers/text-gateway.ts';

let t: Awaited<ReturnType<typeof startTextGateway>>;
let ai: GoogleGenAI;
beforeAll(async () => {
  t = await startTextGateway();
  // The SDK's default API version (v1), as apps built on it use it.
  ai = new GoogleGenAI({ apiKey: t.key, httpOptions: { baseUrl: t.gw.url } });
});
afterAll(() => t?.close());

type GoogleError = { error: { code: number; status: string; message: string; details: { reason?: string; fieldViolations?: { field: string }[] }[] } };
const googleError = async (res: Response) => (await res.json()) as GoogleError;
const lastUpstream = () => t.fake.requests[t.fake.requests.length - 1]!;
const header = (r: { sdkHttpResponse?: { headers?: Record<string, string> } }, name: string) => r.sdkHttpResponse?.headers?.[name];

/** The usageMetadata each upstream's recorded answer comes back as (Gemini's passed through as recorded). */
function expectedUsage(p: (typeof PROVIDERS)[number], stream: boolean) {
  if (p === 'gemini') {
    return stream
      ? { promptTokenCount: 9, candidatesTokenCount: 23, thoughtsTokenCount: 185, totalTokenCount: 217, promptTokensDetails: [{ modality: 'TEXT', tokenCount: 9 }] }
      : { promptTokenCount: 9, candidatesTokenCount: 28, thoughtsTokenCount: 244, totalTokenCount: 281, promptTokensDetails: [{ modality: 'TEXT', tokenCount: 9 }] };
  }
  const { input, output } = replayed(p, stream);
  return { promptTokenCount: input, candidatesTokenCount: output, totalTokenCount: input + output };
}

describe.each(PROVIDERS)('@google/genai → %s', (p) => {
  it('generateContent: the recorded answer, its usage, the upstream named', async () => {
    const r = await ai.models.generateContent({ model: `${p}-text`, contents: 'Hello', config: { systemInstruction: 'You are terse.', temperature: 0.5 } });
    expect(r.text).toBe(replayed(p, false).text);
    expect(r.candidates![0]!.finishReason).toBe('STOP');
    expect(r.usageMetadata).toEqual(expectedUsage(p, false));
    expect(header(r, 'x-gateway-upstream')).toBe(p);
    const sent = lastUpstream();
    if (p === 'gemini') {
      // Passed through: the body as the SDK sent it, the model in the URL.
      expect(sent.path).toBe('/v1beta/models/text-model:generateContent');
      expect(sent.body).toEqual({ contents: [{ parts: [{ text: 'Hello' }], role: 'user' }], systemInstruction: { parts: [{ text: 'You are terse.' }], role: 'user' }, generationConfig: { temperature: 0.5 } });
    } else if (p === 'anthropic') {
      expect(sent.body).toMatchObject({ model: 'text-model', system: 'You are terse.', messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }], temperature: 0.5 });
    } else {
      expect(sent.body).toMatchObject({ model: 'text-model', messages: [{ role: 'system', content: 'You are terse.' }, { role: 'user', content: 'Hello' }], temperature: 0.5 });
    }
  });

  it('generateContentStream: the recorded stream’s text, the usage on the last chunk', async () => {
    let text = '';
    let last: GenerateContentResponse | undefined;
    for await (const chunk of await ai.models.generateContentStream({ model: `${p}-text`, contents: 'Hello' })) {
      text += chunk.text ?? '';
      last = chunk;
    }
    expect(text).toBe(replayed(p, true).text);
    expect(last!.candidates![0]!.finishReason).toBe('STOP');
    expect(last!.usageMetadata).toEqual(expectedUsage(p, true));
  });

  it('countTokens: the upstream’s count where it counts, the gateway’s estimate elsewhere, billed nowhere', async () => {
    const r = await ai.models.countTokens({ model: `${p}-text`, contents: 'Hello, world!' });
    // The fakes count a base per vendor plus the items sent; the estimate is o200k_base's 4 tokens
    // of the text, plus 3 for the message and 3 for the request.
    const expected = { openai: 3001, anthropic: 1001, gemini: 2001, compat: 10 }[p];
    expect(r.totalTokens).toBe(expected);
    expect(header(r, 'x-gateway-token-count')).toBe(p === 'compat' ? 'estimate' : 'upstream');
  });

  it('a function-calling round trip: the call, then its response answered', async () => {
    const config = {
      tools: [
        {
          functionDeclarations: [
            { name: 'get_weather', description: 'Current weather for a city', parametersJsonSchema: { type: 'object', properties: { location: { type: 'string' }, unit: { type: 'string' } }, required: ['location'] } },
          ],
        },
      ],
    };
    const question: Content = { role: 'user', parts: [{ text: 'Weather in Paris?' }] };
    const first = await ai.models.generateContent({ model: `${p}-text`, contents: [question], config });
    const call = first.functionCalls![0]!;
    expect(call).toMatchObject({ name: 'get_weather', args: { location: 'Paris', unit: 'celsius' } });
    // Gemini's own calls carry no id here (the recording has none); translated ones carry the upstream's.
    expect(call.id).toBe(p === 'gemini' ? undefined : p === 'anthropic' ? 'toolu_01FakeTool' : 'call_fake_1');
    const answer: Content = { role: 'user', parts: [{ functionResponse: { id: call.id, name: 'get_weather', response: { output: 'Sunny, 21 °C' } } }] };
    const second = await ai.models.generateContent({ model: `${p}-text`, contents: [question, first.candidates![0]!.content!, answer], config });
    // A translated response's `output` is the tool's result; Gemini gets the response object as sent.
    expect(second.text).toBe(p === 'gemini' ? 'The tool said: {"output":"Sunny, 21 °C"}' : 'The tool said: Sunny, 21 °C');
    const sent = lastUpstream().body;
    if (p === 'gemini') expect(sent.contents[1].parts[0].thoughtSignature).toBe('EqUCCqICAb4+fakeSignature==');
    if (p === 'openai' || p === 'compat') {
      expect(sent.messages.slice(1)).toEqual([
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_fake_1', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris","unit":"celsius"}' } }] },
        { role: 'tool', tool_call_id: 'call_fake_1', content: 'Sunny, 21 °C' },
      ]);
    }
  });
});

describe('the catalog in Gemini’s shape', () => {
  it('models.list and models.get, under v1 (the SDK’s default) and v1beta', async () => {
    const names: string[] = [];
    for await (const m of await ai.models.list({ config: { pageSize: 5 } })) names.push(m.name!);
    expect(names).toContain('models/gemini-text');
    expect(names).not.toContain('models/embed-model');
    const beta = new GoogleGenAI({ apiKey: t.key, httpOptions: { baseUrl: t.gw.url, apiVersion: 'v1beta' } });
    const m = await beta.models.get({ model: 'openai-thinker' });
    expect(m).toMatchObject({ name: 'models/openai-thinker', outputTokenLimit: 16384, thinking: true, supportedActions: ['generateContent', 'streamGenerateContent', 'countTokens'] });
    // Without Google's credential, GET /v1/models is the OpenAI-shaped catalog it always was.
    const plain = (await (await fetch(`${t.gw.url}/v1/models`)).json()) as { object: string };
    expect(plain.object).toBe('list');
  });

  it('an unknown model is 404 in Google’s shape', async () => {
    const res = await fetch(`${t.gw.url}/v1beta/models/no-such-model`);
    expect(res.status).toBe(404);
    expect((await googleError(res)).error).toMatchObject({ code: 404, status: 'NOT_FOUND', details: [{ reason: 'model_not_found' }] });
  });
});

describe('the wire, as clients other than the SDK see it', () => {
  const body = { contents: [{ role: 'user', parts: [{ text: 'Hello' }] }] };
  const post = (path: string, init: { key?: string; headers?: Record<string, string>; body?: unknown } = {}) =>
    fetch(`${t.gw.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...(init.key !== undefined ? { 'x-goog-api-key': init.key } : {}), ...init.headers }, body: JSON.stringify(init.body ?? body) });

  it.each(['openai', 'gemini'])('streamGenerateContent without alt=sse: one JSON array of chunks (%s)', async (p) => {
    const res = await post(`/v1beta/models/${p}-text:streamGenerateContent`, { key: t.key });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const chunks = JSON.parse(await res.text()) as GenerateContentResponse[];
    const text = chunks.map((c) => c.candidates?.[0]?.content?.parts?.map((x) => x.text ?? '').join('') ?? '').join('');
    expect(text).toBe(replayed(p as 'openai' | 'gemini', true).text);
    expect(chunks[chunks.length - 1]!.usageMetadata).toEqual(expectedUsage(p as 'openai' | 'gemini', true));
  });

  it('alt=sse: CRLF-framed data events', async () => {
    const res = await post('/v1beta/models/anthropic-text:streamGenerateContent?alt=sse', { key: t.key });
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const text = await res.text();
    expect(text.startsWith('data: {"candidates":[{"content":{"parts":[{"text":"Hello')).toBe(true);
    expect(text.endsWith('}\r\n\r\n')).toBe(true);
  });

  it('credentials: x-goog-api-key, ?key= and Authorization: Bearer; none is 401 saying how', async () => {
    expect((await post('/v1beta/models/openai-text:generateContent', { key: t.key })).status).toBe(200);
    expect((await post(`/v1beta/models/openai-text:generateContent?key=${t.key}`)).status).toBe(200);
    expect((await post('/v1beta/models/openai-text:generateContent', { headers: { authorization: `Bearer ${t.key}` } })).status).toBe(200);
    const none = await post('/v1beta/models/openai-text:generateContent');
    expect(none.status).toBe(401);
    expect(await googleError(none)).toEqual({
      error: {
        code: 401,
        status: 'UNAUTHENTICATED',
        message: 'Missing API key. Send it as `x-goog-api-key: <API_KEY>`, as the `key` query parameter, or as `Authorization: Bearer <API_KEY>`.',
        details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'invalid_api_key', domain: 'model-gateway' }],
      },
    });
    expect((await googleError(await post('/v1beta/models/openai-text:generateContent', { key: 'mg-wrong' }))).error).toMatchObject({ code: 401, status: 'UNAUTHENTICATED', message: 'Invalid API key.' });
  });

  it('a bad request is 400 INVALID_ARGUMENT naming the field; an unknown method 404', async () => {
    const missing = await post('/v1beta/models/openai-text:generateContent', { key: t.key, body: { generationConfig: {} } });
    expect(missing.status).toBe(400);
    expect((await googleError(missing)).error).toMatchObject({
      code: 400,
      status: 'INVALID_ARGUMENT',
      message: "Missing required parameter: 'contents'.",
      details: [{ reason: 'missing_required_parameter' }, { '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: [{ field: 'contents' }] }],
    });
    const two = await post('/v1beta/models/openai-text:generateContent', { key: t.key, body: { ...body, generationConfig: { candidateCount: 2 } } });
    expect(two.status).toBe(400);
    expect((await googleError(two)).error.details[1]!.fieldViolations![0]!.field).toBe('generationConfig.candidateCount');
    const elsewhere = await post('/v1beta/cachedContents', { key: t.key });
    expect(elsewhere.status).toBe(404);
    expect((await googleError(elsewhere)).error).toMatchObject({ code: 404, status: 'NOT_FOUND', message: 'Unknown route: POST /v1beta/cachedContents.' });
    const unknown = await post('/v1beta/models/openai-text:embedContent', { key: t.key });
    expect(unknown.status).toBe(404);
    expect((await googleError(unknown)).error).toMatchObject({ code: 404, status: 'NOT_FOUND' });
  });

  it('responseJsonSchema becomes the upstream’s structured output, checked like every format’s; safetySettings dropped with a warning', async () => {
    const schema = { type: 'object', properties: { answer: { type: 'string' }, confidence: { type: 'number' } }, required: ['answer'] };
    const ask = (model: string) =>
      post(`/v1beta/models/${model}:generateContent`, {
        key: t.key,
        body: { ...body, safetySettings: [{ category: 'HARM_CATEGORY_HATE_SPEECH', threshold: 'BLOCK_NONE' }], generationConfig: { responseMimeType: 'application/json', responseJsonSchema: schema } },
      });
    const ok = await ask('openai-text');
    expect(ok.status).toBe(200);
    expect(ok.headers.get('x-gateway-warnings')).toBe("not supported by this model's provider, dropped: safetySettings");
    expect(((await ok.json()) as GenerateContentResponse).candidates![0]!.content!.parts).toEqual([{ text: '{"answer":"42","confidence":0.9}' }]);
    expect(lastUpstream().body.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'response', schema } });
    const bad = await ask('openai-badjson');
    expect(bad.status).toBe(502);
    const refused = (await googleError(bad)).error;
    expect(refused).toMatchObject({ code: 502, status: 'UNAVAILABLE' });
    expect(refused.details[0]).toEqual({ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'invalid_structured_output', domain: 'model-gateway' });
    // Passed through, Gemini gets the settings it understands.
    await ask('gemini-text');
    expect(lastUpstream().body.safetySettings).toEqual([{ category: 'HARM_CATEGORY_HATE_SPEECH', threshold: 'BLOCK_NONE' }]);
  });

  it('a rate limit is 429 RESOURCE_EXHAUSTED with the RetryInfo delay Google’s clients wait for', async () => {
    const limited = await startTextGateway('', undefined, '\n  - { id: free, rank: 0, daily_tokens: 1000000, requests_per_minute: 1 }\n  - { id: pro, rank: 1, daily_tokens: 1000000, requests_per_minute: 1 }');
    try {
      const ok = await fetch(`${limited.gw.url}/v1beta/models/openai-text:countTokens`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-goog-api-key': limited.key }, body: JSON.stringify(body) });
      expect(ok.status).toBe(200);
      const res = await fetch(`${limited.gw.url}/v1beta/models/openai-text:generateContent`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-goog-api-key': limited.key }, body: JSON.stringify(body) });
      expect(res.status).toBe(429);
      const retryAfter = Number(res.headers.get('retry-after'));
      expect((await googleError(res)).error).toMatchObject({
        code: 429,
        status: 'RESOURCE_EXHAUSTED',
        details: [{ reason: 'rate_limit_exceeded' }, { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${retryAfter}s` }],
      });
    } finally {
      await limited.close();
    }
  });

  it('plans gate premium models as in every format: 403 PERMISSION_DENIED', async () => {
    await expect(ai.models.generateContent({ model: 'premium-model', contents: 'Hi' })).rejects.toSatisfy((e: unknown) => e instanceof ApiError && e.status === 403 && /PERMISSION_DENIED/.test(e.message));
  });

  it('billed like the other formats: the ledger row under generateContent, the quota charged what the upstream reported', async () => {
    const key = await t.gw.newKey();
    const own = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: t.gw.url } });
    await own.models.generateContent({ model: 'anthropic-text', contents: 'Hello' });
    await t.gw.services.ledger.flush();
    const keyId = (await t.gw.services.keys.authenticate(key))!.keyId;
    const rows = await t.gw.services.db.prisma.usageRecord.findMany({ where: { apiKeyId: keyId } });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ endpoint: 'generateContent', model: 'anthropic-text', provider: 'anthropic', status: 200, promptTokens: 12, completionTokens: 29, billedTokens: BigInt(41) });
  });
});
