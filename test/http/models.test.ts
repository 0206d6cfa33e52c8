// GET /v1/models returns the configured catalog with every field docs/api.md lists; unknowns are null.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CatalogEntry, ModelList } from '../../contract/models.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const config = `
providers:
  - { id: openai, type: openai, api_key: k }
  - { id: claude, type: anthropic, api_key: k }
models:
  - id: bare-model
    endpoint: chat
    upstreams: [{ provider: openai, model: gpt-4o-mini }]
  - id: described
    endpoint: messages
    token_multiplier: 2.5
    premium: true
    required_plan: pro
    upstreams: [{ provider: claude, model: claude-sonnet-4-5 }, { provider: openai, model: gpt-4o }]
    context_window: 200000
    max_output_tokens: 64000
    supports_vision: true
    supports_function_calling: true
    supports_reasoning: false
    input_modalities: [text, image]
    output_modalities: [text]
    modality: text+image->text
    tokenizer: Claude
    description: A described model
    pricing: { prompt: "0.000003", completion: 0.000015 }
plans:
  - { id: free, rank: 0, daily_tokens: 1000, requests_per_minute: 10 }
  - { id: pro, rank: 1, daily_tokens: 100000, requests_per_minute: 100 }
`;

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway({ config });
});
afterAll(() => gw?.close());

it('needs no authentication and matches the contract', async () => {
  const res = await gw.fetch('/v1/models');
  expect(res.status).toBe(200);
  const body: any = await res.json();
  expect(ModelList.parse(body).data).toHaveLength(2);
  for (const entry of body.data) expect(Object.keys(entry).sort()).toEqual(Object.keys(CatalogEntry.shape).sort());
});

it('returns null for everything the config does not say, never 0 or false', async () => {
  const body: any = await (await gw.fetch('/v1/models')).json();
  const bare = body.data.find((m: { id: string }) => m.id === 'bare-model');
  expect(bare).toMatchObject({
    id: 'bare-model',
    object: 'model',
    owned_by: 'openai',
    endpoint: 'chat',
    token_multiplier: 1,
    premium: false,
    required_plan: 'free',
    context_window: null,
    max_output_tokens: null,
    supports_vision: null,
    supports_tools: null,
    supports_function_calling: null,
    supports_reasoning: null,
    supports_json_mode: null,
    supports_audio_input: null,
    supports_image_output: null,
    supports_streaming: null,
    input_modalities: null,
    output_modalities: null,
    modality: null,
    tokenizer: null,
    description: null,
    pricing: null,
    metadata_source: null,
    metadata_status: 'unknown',
  });
});

it('carries the configured metadata, with supports_tools and supports_function_calling as one value', async () => {
  const body: any = await (await gw.fetch('/v1/models')).json();
  const m = body.data.find((x: { id: string }) => x.id === 'described');
  expect(m).toMatchObject({
    owned_by: 'claude',
    endpoint: 'messages',
    token_multiplier: 2.5,
    premium: true,
    required_plan: 'pro',
    context_window: 200000,
    max_output_tokens: 64000,
    supports_vision: true,
    supports_tools: true,
    supports_function_calling: true,
    supports_reasoning: false,
    supports_json_mode: null,
    input_modalities: ['text', 'image'],
    output_modalities: ['text'],
    modality: 'text+image->text',
    tokenizer: 'Claude',
    description: 'A described model',
    pricing: { prompt: '0.000003', completion: '0.000015', image: null, request: null },
    metadata_status: 'unknown',
  });
});

it('is readable by the official openai SDK', async () => {
  const { default: OpenAI } = await import('openai');
  const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused' });
  const ids: string[] = [];
  for await (const m of client.models.list()) ids.push(m.id);
  expect(ids).toEqual(['bare-model', 'described']);
});
