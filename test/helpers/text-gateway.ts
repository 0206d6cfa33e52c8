import { startFakeUpstreams, type FakeUpstreams } from './fake-upstreams.ts';
import type { Logger } from 'pino';
import { startTestGateway, type TestGateway } from './gateway.ts';

export const PROVIDERS = ['openai', 'compat', 'anthropic', 'gemini'] as const;
export type ProviderName = (typeof PROVIDERS)[number];
const SCENARIOS = ['text', 'reasoning', 'badjson', 'image', 'midcut', 'miderror', 'slow', 'delayed', 'keepalive', 'fail500', 'fail429', 'fail400', 'agentic'];

/** A gateway whose models `<provider>-<scenario>` reach the fake upstreams. */
export const TEXT_PLANS = `
  - { id: free, rank: 0, daily_tokens: 1000000, requests_per_minute: 1000 }
  - { id: pro, rank: 1, daily_tokens: 1000000, requests_per_minute: 1000 }`;

/** `plans`: the plans' YAML list entries (default TEXT_PLANS). */
export function textConfig(fake: string, extra = '', plans = TEXT_PLANS): string {
  const models = PROVIDERS.flatMap((p) => [
    ...SCENARIOS.map((s) => `  - { id: ${p}-${s}, endpoint: chat, upstreams: [{ provider: ${p}, model: ${s}-model }] }`),
    // What the catalog knows decides what a translated request keeps (reasoning, output size).
    `  - { id: ${p}-thinker, endpoint: chat, supports_reasoning: true, max_output_tokens: 16384, upstreams: [{ provider: ${p}, model: agentic-model }] }`,
  ]);
  return `
providers:
  - { id: openai, type: openai, base_url: "${fake}/v1", api_key: sk-openai-secret }
  - { id: compat, type: openai-compatible, base_url: "${fake}/v1", api_key: sk-compat-secret }
  - { id: anthropic, type: anthropic, base_url: "${fake}/v1", api_key: sk-ant-secret }
  - { id: gemini, type: gemini, base_url: "${fake}/v1beta", api_key: gemini-secret }
models:
${models.join('\n')}
  - id: failover
    endpoint: chat
    upstreams: [{ provider: openai, model: fail500-model }, { provider: anthropic, model: fail429-model }, { provider: gemini, model: text-model }]
  - id: backoff-then-ok
    endpoint: chat
    upstreams: [{ provider: openai, model: fail500-model }, { provider: gemini, model: text-model }]
  - id: out-of-credits
    endpoint: chat
    upstreams: [{ provider: openai, model: fail402-model }, { provider: gemini, model: text-model }]
  - id: all-fail
    endpoint: chat
    upstreams: [{ provider: openai, model: fail500-model }, { provider: anthropic, model: fail500-model }]
  - id: all-limited
    endpoint: chat
    upstreams: [{ provider: openai, model: fail429-model }, { provider: gemini, model: fail429-model }]
  - { id: claude-opus-4-7, endpoint: messages, upstreams: [{ provider: anthropic, model: claude-opus-4-7 }] }
  - { id: claude-sonnet-4-5, endpoint: messages, upstreams: [{ provider: anthropic, model: claude-sonnet-4-5-20250929 }] }
  - id: premium-model
    endpoint: chat
    premium: true
    required_plan: pro
    upstreams: [{ provider: openai, model: text-model }]
  - id: embed-model
    endpoint: embeddings
    token_multiplier: 0.5
    upstreams: [{ provider: openai, model: text-embedding-3-small }]
  - { id: gemini-embed, endpoint: embeddings, upstreams: [{ provider: gemini, model: gemini-embedding-001 }] }
  - { id: compat-embed, endpoint: embeddings, upstreams: [{ provider: openai, model: fail500-embed }, { provider: compat, model: nomic-embed-text }] }
  - { id: omni-moderation-latest, endpoint: moderation, upstreams: [{ provider: openai, model: omni-moderation-latest }] }
  - { id: text-moderation-stable, endpoint: moderation, upstreams: [{ provider: openai, model: omni-moderation-latest }] }
plans:${plans}
key_cache_ttl_ms: 500
client_disconnect_drain_ms: 2000
${extra}`;
}

/** Appended to the config: the gateway's own web search through the fake SearXNG. */
export const searchBackend = (fake: string) => `web_search: { backend: searxng, base_url: "${fake}" }`;

export async function startTextGateway(extra: string | ((fake: string) => string) = '', logger?: Logger, plans?: string): Promise<{ gw: TestGateway; fake: FakeUpstreams; key: string; close(): Promise<void> }> {
  const fake = await startFakeUpstreams();
  const gw = await startTestGateway({ config: textConfig(fake.url, typeof extra === 'function' ? extra(fake.url) : extra, plans), logger });
  const key = await gw.newKey();
  return { gw, fake, key, close: async () => void (await Promise.all([gw.close(), fake.close()])) };
}
