// {chat, Messages} × {openai, openai-compatible, anthropic, gemini} × {non-stream, stream} ×
// {plain text, tool round trip, image input, JSON schema output, reasoning}, driven by the official
// SDKs (and their stream helpers, which reject malformed event sequences).
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replayed } from '../helpers/replayed-answers.ts';
import { PROVIDERS, startTextGateway } from '../helpers/text-gateway.ts';

let t: Awaited<ReturnType<typeof startTextGateway>>;
let oa: OpenAI;
let an: Anthropic;
beforeAll(async () => {
  t = await startTextGateway();
  oa = new OpenAI({ baseURL: `${t.gw.url}/v1`, apiKey: t.key, maxRetries: 0 });
  an = new Anthropic({ baseURL: t.gw.url, apiKey: t.key, maxRetries: 0 });
});
afterAll(() => t?.close());

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
const weatherTool = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Current weather for a city',
    parameters: { type: 'object', properties: { location: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } }, required: ['location'] },
  },
};
const answerSchema = { type: 'object', properties: { answer: { type: 'string' }, confidence: { type: 'number' } }, required: ['answer'], additionalProperties: false };
const lastUpstream = () => t.fake.requests[t.fake.requests.length - 1]!;

type ChatParams = OpenAI.Chat.ChatCompletionCreateParamsNonStreaming;
async function chat(params: ChatParams, stream: boolean): Promise<OpenAI.Chat.ChatCompletion> {
  if (!stream) return oa.chat.completions.create(params);
  const s = oa.chat.completions.stream({ ...params, stream: true, stream_options: { include_usage: true } });
  return s.finalChatCompletion();
}

type MsgParams = Anthropic.MessageCreateParamsNonStreaming;
async function messages(params: MsgParams, stream: boolean): Promise<Anthropic.Message> {
  if (!stream) return an.messages.create(params);
  return an.messages.stream(params).finalMessage();
}

describe.each(PROVIDERS)('chat completions → %s', (p) => {
  describe.each([false, true])('stream %s', (stream) => {
    it('plain text', async () => {
      const r = await chat({ model: `${p}-text`, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hello' }] }, stream);
      const answer = replayed(p, stream);
      expect(r.choices[0]!.message.content).toBe(answer.text);
      expect(r.choices[0]!.finish_reason).toBe('stop');
      expect(r.usage!.prompt_tokens).toBe(answer.input);
      expect(r.usage!.completion_tokens).toBe(answer.output);
    });

    it('tools with a tool-result round trip', async () => {
      const first = await chat({ model: `${p}-text`, messages: [{ role: 'user', content: 'Weather in Paris?' }], tools: [weatherTool], tool_choice: 'auto' }, stream);
      const msg = first.choices[0]!.message;
      expect(first.choices[0]!.finish_reason).toBe('tool_calls');
      const call = msg.tool_calls![0]! as OpenAI.Chat.ChatCompletionMessageFunctionToolCall;
      expect(call.function.name).toBe('get_weather');
      expect(JSON.parse(call.function.arguments)).toEqual({ location: 'Paris', unit: 'celsius' });
      const second = await chat(
        {
          model: `${p}-text`,
          messages: [{ role: 'user', content: 'Weather in Paris?' }, msg as OpenAI.Chat.ChatCompletionMessageParam, { role: 'tool', tool_call_id: call.id, content: '{"temp":21}' }],
          tools: [weatherTool],
        },
        stream,
      );
      expect(second.choices[0]!.message.content).toContain('The tool said:');
      expect(second.choices[0]!.message.content).toContain('21');
    });

    it('image input (data URI)', async () => {
      const r = await chat({ model: `${p}-image`, messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } }] }] }, stream);
      expect(r.choices[0]!.message.content).toBe('I see an image.');
      const sent = JSON.stringify(lastUpstream().body);
      expect(sent).toContain(PNG);
      if (p === 'anthropic') expect(sent).toContain('"media_type":"image/png"');
      if (p === 'gemini') expect(sent).toContain('"inlineData":{"mimeType":"image/png"');
    });

    it('JSON schema output, validated', async () => {
      const r = await chat({ model: `${p}-text`, messages: [{ role: 'user', content: 'Answer' }], response_format: { type: 'json_schema', json_schema: { name: 'answer', schema: answerSchema, strict: true } } }, stream);
      expect(JSON.parse(r.choices[0]!.message.content!)).toEqual({ answer: '42', confidence: 0.9 });
      await expect(
        chat({ model: `${p}-badjson`, messages: [{ role: 'user', content: 'Answer' }], response_format: { type: 'json_schema', json_schema: { name: 'answer', schema: answerSchema } } }, stream),
      ).rejects.toMatchObject(stream ? { code: 'invalid_structured_output', type: 'provider_error' } : { status: 502, code: 'invalid_structured_output' });
    });

    it('reasoning', async () => {
      const r = await chat({ model: `${p}-reasoning`, messages: [{ role: 'user', content: '2+2?' }], reasoning_effort: 'medium' }, stream);
      const m = r.choices[0]!.message as OpenAI.Chat.ChatCompletionMessage & { reasoning_content?: string };
      expect(m.content).toBe('The answer is 4.');
      expect(m.reasoning_content).toBe('Let me think about it step by step.');
      expect(r.usage!.completion_tokens_details?.reasoning_tokens ?? 0).toBeGreaterThanOrEqual(p === 'anthropic' ? 0 : 45);
      const sent = lastUpstream().body;
      if (p === 'anthropic') expect(sent.thinking).toEqual({ type: 'enabled', budget_tokens: 8192 });
      if (p === 'gemini') expect(sent.generationConfig.thinkingConfig).toEqual({ thinkingBudget: 8192, includeThoughts: true });
      if (p === 'openai' || p === 'compat') expect(sent.reasoning_effort).toBe('medium');
    });
  });
});

describe.each(PROVIDERS)('Messages → %s', (p) => {
  describe.each([false, true])('stream %s', (stream) => {
    it('plain text', async () => {
      const r = await messages({ model: `${p}-text`, max_tokens: 200, system: 'Be brief.', messages: [{ role: 'user', content: 'Hello' }] }, stream);
      const answer = replayed(p, stream);
      expect(r.content).toEqual([expect.objectContaining({ type: 'text', text: answer.text })]);
      expect(r.stop_reason).toBe('end_turn');
      expect(r.usage).toMatchObject({ input_tokens: answer.input, output_tokens: answer.output });
    });

    it('tools with a tool-result round trip', async () => {
      const tools = [{ name: 'get_weather', description: 'Current weather', input_schema: weatherTool.function.parameters as Anthropic.Tool.InputSchema }];
      const first = await messages({ model: `${p}-text`, max_tokens: 200, messages: [{ role: 'user', content: 'Weather in Paris?' }], tools }, stream);
      expect(first.stop_reason).toBe('tool_use');
      const use = first.content.find((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use')!;
      expect(use).toMatchObject({ name: 'get_weather', input: { location: 'Paris', unit: 'celsius' } });
      const second = await messages(
        {
          model: `${p}-text`,
          max_tokens: 200,
          tools,
          messages: [
            { role: 'user', content: 'Weather in Paris?' },
            { role: 'assistant', content: first.content as Anthropic.ContentBlockParam[] },
            { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: '{"temp":21}' }] },
          ],
        },
        stream,
      );
      expect((second.content.find((b) => b.type === 'text') as Anthropic.TextBlock).text).toContain('21');
      if (p === 'gemini') {
        // The Gemini thought signature came back as an empty signed thinking block and went upstream again.
        expect(JSON.stringify(lastUpstream().body)).toContain('"thoughtSignature":"EqUCCqICAb4+fakeSignature=="');
      }
    });

    it('image input (base64)', async () => {
      const r = await messages(
        { model: `${p}-image`, max_tokens: 100, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } }, { type: 'text', text: 'What is this?' }] }] },
        stream,
      );
      expect((r.content[0] as Anthropic.TextBlock).text).toBe('I see an image.');
      const sent = JSON.stringify(lastUpstream().body);
      if (p === 'openai' || p === 'compat') expect(sent).toContain(`"url":"data:image/png;base64,${PNG}"`);
      if (p === 'gemini') expect(sent).toContain('"inlineData"');
    });

    it('reasoning with thinking budgets', async () => {
      const r = await messages({ model: `${p}-reasoning`, max_tokens: 3000, thinking: { type: 'enabled', budget_tokens: 2048 }, messages: [{ role: 'user', content: '2+2?' }] }, stream);
      const thinking = r.content.find((b): b is Anthropic.ThinkingBlock => b.type === 'thinking');
      expect(thinking?.thinking).toBe('Let me think about it step by step.');
      if (p === 'anthropic') expect(thinking?.signature).toBe('sig-EqQBCkYIBxgCKkA');
      expect((r.content.find((b) => b.type === 'text') as Anthropic.TextBlock).text).toBe('The answer is 4.');
      const sent = lastUpstream().body;
      if (p === 'gemini') expect(sent.generationConfig.thinkingConfig.thinkingBudget).toBe(2048);
      if (p === 'openai' || p === 'compat') expect(sent.reasoning_effort).toBe('low');
    });
  });
});
