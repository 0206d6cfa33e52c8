// Caching hints through the gateway (docs/translation.md, caching hints): Anthropic's
// `cache_control` reaches Anthropic upstreams from every format that carries it, OpenAI's
// `prompt_cache_key`/`prompt_cache_retention` reach OpenAI's wire, and where the upstream has no
// place for a hint it is dropped and named in X-Gateway-Warnings.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { startUsageUpstreams, usageConfig, type UsageUpstreams } from '../helpers/usage-upstreams.ts';

let fake: UsageUpstreams;
let gw: TestGateway;
let key: string;
beforeAll(async () => {
  fake = await startUsageUpstreams();
  gw = await startTestGateway({ config: usageConfig(fake.url) });
  key = await gw.newKey();
});
afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

const post = async (path: string, json: object) => {
  const res = await gw.fetch(path, { method: 'POST', key, json, headers: { 'anthropic-version': '2023-06-01' } });
  expect(res.status).toBe(200);
  await res.arrayBuffer();
  return { warnings: res.headers.get('x-gateway-warnings'), sent: fake.requests[fake.requests.length - 1]!.body };
};

const mark = { type: 'ephemeral' };
const hour = { type: 'ephemeral', ttl: '1h' };
/** A chat request as Roo Code or Cline send it to Claude through OpenRouter, with OpenAI's own caching hints. */
const chatBody = (model: string) => ({
  model,
  cache_control: hour,
  prompt_cache_key: 'session-42',
  prompt_cache_retention: '24h',
  messages: [
    { role: 'system', content: [{ type: 'text', text: 'You are a coding agent.', cache_control: mark }] },
    { role: 'user', content: [{ type: 'text', text: 'Read the file.', cache_control: mark }] },
  ],
  tools: [{ type: 'function', function: { name: 'read_file', parameters: { type: 'object' } }, cache_control: mark }],
});

describe('chat clients', () => {
  it('→ Anthropic: the breakpoints on the same system block, text block and tool, the request-wide one too; OpenAI’s hints named', async () => {
    const { warnings, sent } = await post('/v1/chat/completions', chatBody('anthropic-usage'));
    expect(sent).toMatchObject({
      system: [{ type: 'text', text: 'You are a coding agent.', cache_control: mark }],
      cache_control: hour,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Read the file.', cache_control: mark }] }],
      tools: [{ name: 'read_file', input_schema: { type: 'object' }, cache_control: mark }],
    });
    expect(sent).not.toHaveProperty('prompt_cache_key');
    expect(warnings).toBe("not supported by this model's provider, dropped: prompt_cache_key, prompt_cache_retention");
  });

  it('→ Gemini: every hint dropped and named', async () => {
    const { warnings, sent } = await post('/v1/chat/completions', chatBody('gemini-usage'));
    expect(JSON.stringify(sent)).not.toMatch(/cache_control|prompt_cache/);
    expect(warnings).toBe("not supported by this model's provider, dropped: prompt_cache_key, prompt_cache_retention, cache_control");
  });

  it.each(['openai', 'compat'])('→ %s (passed through): every hint as sent, nothing named', async (p) => {
    const body = chatBody(`${p}-usage`);
    const { warnings, sent } = await post('/v1/chat/completions', body);
    expect(sent).toEqual({ ...body, model: `${p}-model` });
    expect(warnings).toBeNull();
  });
});

describe('Responses clients', () => {
  const body = (model: string) => ({ model, input: 'Hi', cache_control: mark, prompt_cache_key: 'session-42', prompt_cache_retention: 'in_memory' });

  it('→ OpenAI (passed through): prompt_cache_key and prompt_cache_retention as sent', async () => {
    const { warnings, sent } = await post('/v1/responses', body('openai-usage'));
    expect(sent).toMatchObject({ prompt_cache_key: 'session-42', prompt_cache_retention: 'in_memory' });
    expect(warnings).toBeNull();
  });

  it('→ Anthropic: the request-wide breakpoint as Anthropic’s; OpenAI’s hints named', async () => {
    const { warnings, sent } = await post('/v1/responses', body('anthropic-usage'));
    expect(sent.cache_control).toEqual(mark);
    expect(warnings).toBe("not supported by this model's provider, dropped: prompt_cache_key, prompt_cache_retention");
  });

  it('→ OpenAI-compatible (translated to chat): every hint dropped and named', async () => {
    const { warnings, sent } = await post('/v1/responses', body('compat-usage'));
    expect(JSON.stringify(sent)).not.toMatch(/cache_control|prompt_cache/);
    expect(warnings).toBe("not supported by this model's provider, dropped: prompt_cache_key, prompt_cache_retention, cache_control");
  });
});

describe('Messages clients', () => {
  const body = (model: string) => ({
    model,
    max_tokens: 100,
    system: [{ type: 'text', text: 'You are a coding agent.', cache_control: mark }],
    messages: [{ role: 'user', content: 'Hi' }],
  });

  it('→ Anthropic (passed through): as sent', async () => {
    const { warnings, sent } = await post('/v1/messages', body('anthropic-usage'));
    expect(sent.system).toEqual([{ type: 'text', text: 'You are a coding agent.', cache_control: mark }]);
    expect(warnings).toBeNull();
  });

  it('→ OpenAI: dropped and named', async () => {
    const { warnings, sent } = await post('/v1/messages', body('openai-usage'));
    expect(JSON.stringify(sent)).not.toContain('cache_control');
    expect(warnings).toBe("not supported by this model's provider, dropped: cache_control");
  });
});
