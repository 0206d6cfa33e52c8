// Catalog metadata from OpenRouter's real model list (snapshot of 2025-05-23) and Poe's, with
// every mapping rule, nulls, config overrides, the database cache and refreshes from fake sources.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MetadataStore, candidateIds } from '../../server/catalog/metadata.ts';
import { mapOpenRouter } from '../../server/providers/openrouter/catalog.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const SNAPSHOT = new URL('../fixtures/recorded/roo-code/openrouter-models.2025-05-23.decoded.json', import.meta.url).pathname;

let sources: Server;
let sourceUrl: string;
let openrouterList: unknown[] = [];
const poeList = [
  { id: 'Poe-Only-Bot', object: 'model', created: 1_735_000_000_000, owned_by: 'Poe', description: 'Only Poe has it.', architecture: { input_modalities: ['text', 'image'], output_modalities: ['text'], modality: 'text,image->text' }, pricing: { prompt: '0.000001', completion: '0.000002' }, context_window: { context_length: 32000, max_output_tokens: 4000 } },
];

function config(fetchFrom?: string) {
  return `
providers:
  - { id: openai, type: openai, base_url: "http://127.0.0.1:9/v1", api_key: k }
  - { id: anthropic, type: anthropic, base_url: "http://127.0.0.1:9/v1", api_key: k }
  - { id: gemini, type: gemini, base_url: "http://127.0.0.1:9/v1beta", api_key: k }
  - { id: openrouter, type: openai-compatible, base_url: "http://127.0.0.1:9/v1", api_key: k }
models:
  - { id: gpt-4o-mini, endpoint: chat, upstreams: [{ provider: openai, model: gpt-4o-mini }] }
  - { id: claude-3-7, endpoint: messages, upstreams: [{ provider: anthropic, model: claude-3-7-sonnet-20250219 }] }
  - { id: gemini-pro, endpoint: chat, upstreams: [{ provider: gemini, model: gemini-2.5-pro-preview }] }
  - { id: llama-free, endpoint: chat, metadata_id: "meta-llama/llama-3.3-70b-instruct:free", upstreams: [{ provider: openrouter, model: meta-llama/llama-3.3-70b-instruct:free }] }
  - { id: auto, endpoint: chat, upstreams: [{ provider: openrouter, model: openrouter/auto }] }
  - id: mini-override
    endpoint: chat
    context_window: 64000
    supports_vision: false
    description: Ours.
    pricing: { prompt: "0.000001" }
    upstreams: [{ provider: openai, model: gpt-4o-mini }]
  - { id: my-finetune, endpoint: chat, upstreams: [{ provider: openai, model: ft:gpt-4o-mini:acme:1 }] }
  - { id: poe-bot, endpoint: chat, upstreams: [{ provider: openrouter, model: Poe-Only-Bot }] }
catalog_metadata:
  snapshot: "${SNAPSHOT}"
${fetchFrom ? `  openrouter: { url: "${fetchFrom}/openrouter" }\n  poe: { url: "${fetchFrom}/poe" }` : '  openrouter: { enabled: false }\n  poe: { enabled: false }'}
`;
}

beforeAll(async () => {
  sources = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ data: req.url === '/poe' ? poeList : openrouterList }));
  });
  await new Promise<void>((r) => sources.listen(0, '127.0.0.1', r));
  sourceUrl = `http://127.0.0.1:${(sources.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => sources.close(() => r())));

const models = async (gw: TestGateway) => Object.fromEntries(((await (await gw.fetch('/v1/models')).json()) as any).data.map((m: any) => [m.id, m]));

describe('from the OpenRouter snapshot', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({ config: config() });
  });
  afterAll(() => gw?.close());

  it('maps an OpenAI model by <vendor>/<upstream id>', async () => {
    const m = (await models(gw))['gpt-4o-mini'];
    expect(m).toMatchObject({
      metadata_source: 'openrouter',
      metadata_status: 'known',
      context_window: 128000,
      max_output_tokens: 16384,
      modality: 'text+image->text',
      input_modalities: ['text', 'image', 'file'],
      output_modalities: ['text'],
      tokenizer: 'GPT',
      supports_vision: true,
      supports_audio_input: false,
      supports_image_output: false,
      supports_tools: true,
      supports_function_calling: true,
      supports_reasoning: false,
      supports_json_mode: true,
      supports_streaming: null,
      pricing: { prompt: '0.00000015', completion: '0.0000006', image: '0.000217', request: '0' },
    });
    expect(m.description).toContain('GPT-4o mini');
  });

  it('normalises dated Anthropic ids and N-M versions, and Gemini to google/', async () => {
    const all = await models(gw);
    expect(all['claude-3-7']).toMatchObject({ metadata_status: 'known', context_window: 200000, max_output_tokens: 64000, supports_reasoning: true, supports_json_mode: false, tokenizer: 'Claude' });
    expect(all['gemini-pro']).toMatchObject({ metadata_status: 'known', context_window: 1048576, max_output_tokens: 65535, supports_json_mode: true });
  });

  it('uses metadata_id when given; free means a price of "0", "-1" (varies) means unknown', async () => {
    const all = await models(gw);
    expect(all['llama-free']).toMatchObject({ context_window: 131072, max_output_tokens: 2048, pricing: { prompt: '0', completion: '0', image: '0', request: '0' } });
    // The model-level context length, not top_provider's (null here); no supported parameters = none.
    expect(all.auto).toMatchObject({ context_window: 2000000, max_output_tokens: null, supports_tools: false, pricing: { prompt: null, completion: null, image: null, request: null } });
  });

  it('config values override resolved ones; unmatched models stay unknown with nulls', async () => {
    const all = await models(gw);
    expect(all['mini-override']).toMatchObject({
      metadata_status: 'known',
      context_window: 64000,
      supports_vision: false,
      description: 'Ours.',
      // Prices field by field: the config's prompt price, the rest from OpenRouter's entry; its
      // "0" for internal_reasoning and web_search means "not charged apart", so unknown.
      pricing: {
        prompt: '0.000001',
        completion: '0.0000006',
        image: '0.000217',
        request: '0',
        input_cache_read: '0.000000075',
        input_cache_write: null,
        input_cache_write_1h: null,
        internal_reasoning: null,
        web_search: null,
        input_audio: null,
        output_audio: null,
        output_image: null,
        video_second: null,
        character: null,
        audio_minute: null,
      },
      max_output_tokens: 16384,
    });
    expect(all['my-finetune']).toMatchObject({ metadata_status: 'unknown', metadata_source: null, context_window: null, supports_tools: null, pricing: null, tokenizer: null });
    expect(all['poe-bot'].metadata_status).toBe('unknown');
  });

  it('never matches fuzzily', () => {
    const providers = new Map([['openai', { id: 'openai', type: 'openai' as const, timeout_ms: 1 }]]);
    const ids = candidateIds({ id: 'gpt-4o', endpoint: 'chat', token_multiplier: 1, premium: false, required_plan: 'free', upstreams: [{ provider: 'openai', model: 'gpt-4o-2024-08-06', weight: 1 }], strategy: 'failover', cache_affinity: true }, providers);
    expect(ids).toEqual(['gpt-4o', 'openai/gpt-4o-2024-08-06', 'openai/gpt-4o']);
    expect(mapOpenRouter({ id: 'x' })).toMatchObject({ context_window: null, supports_tools: null, supports_vision: null, pricing: null });
  });
});

describe('refreshed from the sources, cached in the database', () => {
  it('takes fresh lists, adds Poe for what OpenRouter lacks, and serves them after a restart offline', async () => {
    openrouterList = [{ id: 'openai/gpt-4o-mini', context_length: 150000, architecture: { input_modalities: ['text'], output_modalities: ['text'] }, supported_parameters: ['tools'], pricing: { prompt: '0.1', completion: '0.2' }, top_provider: { max_completion_tokens: 999 } }];
    const gw = await startTestGateway({ config: config(sourceUrl) });
    try {
      await gw.services.refreshMetadata();
      const all = await models(gw);
      expect(all['gpt-4o-mini']).toMatchObject({ context_window: 150000, max_output_tokens: 999, supports_vision: false, supports_json_mode: false });
      // The new list replaced the snapshot: Claude is no longer known.
      expect(all['claude-3-7'].metadata_status).toBe('unknown');
      expect(all['poe-bot']).toMatchObject({ metadata_source: 'poe', metadata_status: 'known', context_window: 32000, max_output_tokens: 4000, supports_vision: true, pricing: { prompt: '0.000001', completion: '0.000002', image: null, request: null } });
      // What a restart (offline) loads: the lists as last fetched, not the snapshot.
      const restarted = new MetadataStore(gw.services.db.prisma);
      await restarted.load();
      expect([restarted.size('openrouter'), restarted.size('poe')]).toEqual([1, 1]);
      const cfg = gw.services.config;
      const providers = new Map(cfg.providers.map((p) => [p.id, p]));
      expect(restarted.resolve(cfg.models.find((m) => m.id === 'gpt-4o-mini')!, providers)?.fields.context_window).toBe(150000);
      // A failing source keeps the last known list.
      openrouterList = 'broken' as never;
      await gw.services.refreshMetadata();
      expect((await models(gw))['gpt-4o-mini'].context_window).toBe(150000);
    } finally {
      await gw.close();
    }
  });
});
