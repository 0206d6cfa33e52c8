// The Vercel AI SDK's providers against the gateway: text, streams and a multi-step tool loop.
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText, jsonSchema, stepCountIs, streamText, tool } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replayed } from '../helpers/replayed-answers.ts';
import { PROVIDERS, startTextGateway } from '../helpers/text-gateway.ts';

let t: Awaited<ReturnType<typeof startTextGateway>>;
beforeAll(async () => {
  t = await startTextGateway();
});
afterAll(() => t?.close());

const weather = tool({
  description: 'Current weather for a city',
  inputSchema: jsonSchema<{ location: string; unit?: string }>({ type: 'object', properties: { location: { type: 'string' }, unit: { type: 'string' } }, required: ['location'] }),
  execute: async ({ location }) => ({ location, temp: 21 }),
});

const clients = {
  'openai-compatible': () => createOpenAICompatible({ name: 'gateway', baseURL: `${t.gw.url}/v1`, apiKey: t.key, includeUsage: true }).chatModel,
  anthropic: () => createAnthropic({ baseURL: `${t.gw.url}/v1`, apiKey: t.key }).messages,
};

describe.each(Object.keys(clients) as (keyof typeof clients)[])('AI SDK %s provider', (client) => {
  describe.each(PROVIDERS)('→ %s', (p) => {
    it('generateText and streamText', async () => {
      const model = clients[client]()(`${p}-text`);
      const g = await generateText({ model, prompt: 'Hello', maxRetries: 0 });
      expect(g.text).toBe(replayed(p, false).text);
      expect(g.finishReason).toBe('stop');
      expect(g.usage).toMatchObject({ inputTokens: replayed(p, false).input, outputTokens: replayed(p, false).output });
      const s = streamText({ model, prompt: 'Hello', maxRetries: 0 });
      let text = '';
      for await (const delta of s.textStream) text += delta;
      expect(text).toBe(replayed(p, true).text);
      expect(await s.usage).toMatchObject({ inputTokens: replayed(p, true).input, outputTokens: replayed(p, true).output });
    });

    it('runs a tool loop to the final answer', async () => {
      const model = clients[client]()(`${p}-text`);
      const r = await generateText({ model, prompt: 'Weather in Paris?', tools: { get_weather: weather }, stopWhen: stepCountIs(3), maxRetries: 0 });
      expect(r.steps[0]!.toolCalls[0]).toMatchObject({ toolName: 'get_weather', input: { location: 'Paris', unit: 'celsius' } });
      expect(r.text).toContain('The tool said:');
      expect(r.text).toContain('21');
      const s = streamText({ model, prompt: 'Weather in Paris?', tools: { get_weather: weather }, stopWhen: stepCountIs(3), maxRetries: 0 });
      expect(await s.text).toContain('21');
    });
  });
});
