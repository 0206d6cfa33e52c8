import { startFakeUpstreams, type FakeUpstreams } from './fake-upstreams.ts';
import { randomToken } from '../../server/runtime/secrets.ts';
import { TEST_REDIS_URL, startTestGateway, type TestGateway } from './gateway.ts';

/** Each `exact` request reserves and uses (10 + 20) × 2 = 60 billed tokens. */
export const COST = 60;
export const EXACT_BODY = { model: 'exact', max_tokens: 20, messages: [{ role: 'user', content: 'x'.repeat(40) }] };

/** The `basic` plan's limits: per key, and optionally per user (`user_*`) and `max_keys`. */
export type BasicPlan = {
  daily_tokens: number;
  requests_per_minute: number;
  max_concurrent_jobs?: number;
  user_daily_tokens?: number;
  user_requests_per_minute?: number;
  user_max_concurrent_jobs?: number;
  max_keys?: number;
};

export function billingConfig(fake: string, plan: BasicPlan): string {
  const basic = Object.entries({ max_concurrent_jobs: 2, ...plan })
    .map(([k, v]) => `${k}: ${v}`)
    .join(', ');
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
  - { id: basic, rank: 0, ${basic} }
  - { id: gold, rank: 1, daily_tokens: 100000000, requests_per_minute: 100000, max_concurrent_jobs: 10 }
key_cache_ttl_ms: 60000
# Tests set the clock months back; the raw rows of those days must outlive the start-up upkeep.
ledger: { retention_days: 3650 }
`;
}

export async function startBillingGateway(plan: BasicPlan, env: NodeJS.ProcessEnv = {}) {
  const fake: FakeUpstreams = await startFakeUpstreams();
  const gw: TestGateway = await startTestGateway({ config: billingConfig(fake.url, plan), env });
  return { gw, fake, close: async () => void (await Promise.all([gw.close(), fake.close()])) };
}

/** Both counter stores, as `describe.each` takes them: in process, and Redis under a prefix of its own. */
export const COUNTER_STORES = [
  ['in-process', {}],
  ['Redis', { REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: `mgtest:${randomToken(6)}:` }],
] as const;
