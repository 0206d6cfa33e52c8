// A field the client's format does not have (`temprature`) is dropped when the request is
// translated and named "unknown field" in X-Gateway-Warnings, with the field meant when one is
// close; a field the format has but the upstream's provider cannot take is named "not supported".
// Passed through to the format's own provider, every field is forwarded as sent. Through the
// official SDKs, each body carrying an extra field as an application would send it.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replayed } from '../helpers/replayed-answers.ts';
import { startTextGateway } from '../helpers/text-gateway.ts';

let t: Awaited<ReturnType<typeof startTextGateway>>;
let oa: OpenAI;
let an: Anthropic;
beforeAll(async () => {
  t = await startTextGateway();
  oa = new OpenAI({ baseURL: `${t.gw.url}/v1`, apiKey: t.key, maxRetries: 0 });
  an = new Anthropic({ baseURL: t.gw.url, apiKey: t.key, maxRetries: 0 });
});
afterAll(() => t?.close());

const lastUpstream = () => t.fake.requests.at(-1)!;
const TYPO = 'unknown field, dropped: temprature (did you mean temperature?)';

type Chat = OpenAI.Chat.ChatCompletionCreateParamsNonStreaming;
type Responses = OpenAI.Responses.ResponseCreateParamsNonStreaming;
type Messages = Anthropic.MessageCreateParamsNonStreaming;

const chat = (model: string, extra: object) => oa.chat.completions.create({ model, messages: [{ role: 'user', content: 'Hello' }], ...extra } as Chat).withResponse();
const responses = (model: string, extra: object) => oa.responses.create({ model, input: 'Hello', ...extra } as Responses).withResponse();
const messages = (model: string, extra: object) => an.messages.create({ model, max_tokens: 64, messages: [{ role: 'user', content: 'Hello' }], ...extra } as Messages).withResponse();

describe('translated: dropped and named', () => {
  it('chat → Anthropic', async () => {
    const { data, response } = await chat('anthropic-text', { temprature: 0.2 });
    expect(data.choices[0]!.message.content).toBe(replayed('anthropic', false).text);
    expect(response.headers.get('x-gateway-warnings')).toBe(TYPO);
    expect(lastUpstream().path).toBe('/v1/messages');
    expect(lastUpstream().body).not.toHaveProperty('temprature');
  });

  it('chat → Gemini: a field the format has but Gemini cannot take, and two unknown ones', async () => {
    const { response } = await chat('gemini-text', { logprobs: true, temprature: 0.2, frobnicate: 1 });
    expect(response.headers.get('x-gateway-warnings')).toBe("not supported by this model's provider, dropped: logprobs; unknown fields, dropped: temprature (did you mean temperature?), frobnicate");
    expect(JSON.stringify(lastUpstream().body)).not.toMatch(/temprature|frobnicate|logprobs/);
  });

  it('chat → Anthropic, streamed: the same header on the stream', async () => {
    const { data: stream, response } = await oa.chat.completions.create({ model: 'anthropic-text', stream: true, messages: [{ role: 'user', content: 'Hello' }], max_tokns: 50 } as never as OpenAI.Chat.ChatCompletionCreateParamsStreaming).withResponse();
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe(replayed('anthropic', true).text);
    expect(response.headers.get('x-gateway-warnings')).toBe('unknown field, dropped: max_tokns (did you mean max_tokens?)');
  });

  it('Messages → OpenAI: "unknown field" for a field no API has, "not supported" for Anthropic’s own', async () => {
    const { data, response } = await messages('openai-text', { temprature: 0.2, context_management: { edits: [] } });
    expect(data.content[0]!.type).toBe('text');
    expect(response.headers.get('x-gateway-warnings')).toBe(`not supported by this model's provider, dropped: context_management; ${TYPO}`);
    expect(lastUpstream().path).toBe('/v1/chat/completions');
    expect(JSON.stringify(lastUpstream().body)).not.toMatch(/temprature|context_management/);
  });

  it('Messages → Gemini', async () => {
    const { response } = await messages('gemini-text', { stop_sequence: ['END'] });
    expect(response.headers.get('x-gateway-warnings')).toBe('unknown field, dropped: stop_sequence (did you mean stop_sequences?)');
  });

  it('Responses → Anthropic', async () => {
    const { data, response } = await responses('anthropic-text', { temprature: 0.2 });
    expect(data.status).toBe('completed');
    expect(response.headers.get('x-gateway-warnings')).toBe(TYPO);
    expect(lastUpstream().body).not.toHaveProperty('temprature');
  });

  it('Responses → an OpenAI-compatible server (translated to chat): a Responses field it cannot take, and an unknown one', async () => {
    const { response } = await responses('compat-text', { truncation: 'auto', max_output_token: 20 });
    expect(response.headers.get('x-gateway-warnings')).toBe("not supported by this model's provider, dropped: truncation; unknown field, dropped: max_output_token (did you mean max_output_tokens?)");
    expect(lastUpstream().path).toBe('/v1/chat/completions');
  });

  it('a field with nothing close is named without a guess; hints the gateway strips stay silent', async () => {
    const { response } = await chat('anthropic-text', { my_trace_id: 'abc', user: 'u-1', store: false });
    expect(response.headers.get('x-gateway-warnings')).toBe('unknown field, dropped: my_trace_id');
  });
});

describe('passed through: forwarded as sent, no warning', () => {
  it('chat → OpenAI and an OpenAI-compatible server', async () => {
    for (const model of ['openai-text', 'compat-text']) {
      const { response } = await chat(model, { temprature: 0.2 });
      expect(response.headers.get('x-gateway-warnings')).toBeNull();
      expect(lastUpstream().body).toMatchObject({ temprature: 0.2 });
    }
  });

  it('Messages → Anthropic', async () => {
    const { response } = await messages('anthropic-text', { temprature: 0.2 });
    expect(response.headers.get('x-gateway-warnings')).toBeNull();
    expect(lastUpstream().body).toMatchObject({ temprature: 0.2 });
  });

  it('Responses → OpenAI', async () => {
    const { response } = await responses('openai-text', { temprature: 0.2 });
    expect(response.headers.get('x-gateway-warnings')).toBeNull();
    expect(lastUpstream().path).toBe('/v1/responses');
    expect(lastUpstream().body).toMatchObject({ temprature: 0.2 });
  });
});
