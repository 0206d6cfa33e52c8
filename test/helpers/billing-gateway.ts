import { startFakeUpstreams, type FakeUpstreams } from './fake-upstreams.ts';
import { startTestGateway, type TestGateway } from './gateway.ts';

/** Each `exact` request reserves and uses (10 + 20) × 2 = 60 billed tokens. */
export const COST = 60;
export const EXACT_BODY = { model: 'exact', max_tokens: 20, messages: [{ role: 'user', content: 'x'.repeat(40) }] };

export function billingConfig(fake: string, plan: { daily_tokens: number; requests_per_minute: number }): string {
  return `
providers:
  - { id: openai, type: openai, base_url: "${fake}/v1", api_key: k }
  - { id: anthropic, type: anthropic, base_url: "${fake}/v1", api_key: k }
models:
  - { id: exact, endpoint: chat, token_multiplier: 2, upstreams: [{ provider: openai, model: exact-model }] }
  - { id: exact-anthropic, endpoint: messages, token_multiplier: 2, upstreams: [{ provider: anthropic, model: exact-slow-model }] }
  - { id: broken, endpoint: chat, upstreams: [{ provider: openai, model: fail500-model }] }
  - { id: gold, endpoint: chat, premium: true, required_plan: gold, upstreams: [{ provider: openai, model: exact-model }] }
plans:
  - { id: basic, rank: 0, daily_tokens: ${plan.daily_tokens}, requests_per_minute: ${plan.requests_per_minute}, max_concurrent_jobs: 2 }
  - { id: gold, rank: 1, daily_tokens: 100000000, requests_per_minute: 100000, max_concurrent_jobs: 10 }
key_cache_ttl_ms: 60000
`;
}

export async function startBillingGateway(plan: { daily_tokens: number; requests_per_minute: number }, env: NodeJS.ProcessEnv = {}) {
  const fake: FakeUpstreams = await startFakeUpstreams();
  const gw: TestGateway = await startTestGateway({ config: billingConfig(fake.url, plan), env });
  return { gw, fake, close: async () => void (await Promise.all([gw.close(), fake.close()])) };
}
