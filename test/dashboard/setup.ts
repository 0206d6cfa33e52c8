// A gateway for the dashboard's tests: text models on the fake text upstreams (OpenAI and
// Anthropic formats), an image and a video model on the fake media upstreams, a model none of
// whose upstreams can work (no api_key), two priced models, two plans (the free one with spend
// budgets; budget alerts recorded, no webhook).
import type { Logger } from 'pino';
import { startFakeUpstreams, type FakeUpstreams } from '../helpers/fake-upstreams.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { startFakeMedia, type FakeMedia } from '../media/fake-media.ts';

export const PASSWORD = 'correct horse battery';

/** `extra.models`: more lines of the models list (YAML flow maps, indented two spaces); `extra.settings`: more top-level settings. */
export const dashboardConfig = (text: string, media: string, extra: { models?: string; settings?: string } = {}) => `
providers:
  # A pool of two keys (the first with an alias): the health views show each key's share and state.
  - { id: openai, type: openai, base_url: "${text}/v1", api_keys: [{ key: sk-openai-secret, alias: primary }, sk-openai-second] }
  - { id: anthropic, type: anthropic, base_url: "${text}/v1", api_key: sk-ant-secret }
  - { id: images, type: openai, base_url: "${media}/openai/v1", api_key: openai-key }
  - { id: gemini, type: gemini, base_url: "${media}/gemini/v1beta", api_key: gemini-key }
  - { id: keyless, type: openai, base_url: "${text}/v1" }
models:
${extra.models ?? ''}  - { id: gpt-4o-mini, endpoint: chat, context_window: 128000, max_output_tokens: 16384, supports_tools: true, supports_vision: true, upstreams: [{ provider: openai, model: text-model }] }
  - { id: claude-sonnet-4-5, endpoint: messages, token_multiplier: 3, upstreams: [{ provider: anthropic, model: text-model }] }
  - { id: gpt-5-pro, endpoint: chat, premium: true, required_plan: pro, token_multiplier: 10, upstreams: [{ provider: openai, model: text-model }] }
  - { id: gpt-4o-broken, endpoint: chat, upstreams: [{ provider: openai, model: fail400-model }] }
  - { id: gpt-image-1, endpoint: images, token_multiplier: 2, upstreams: [{ provider: images, model: gpt-image-1 }] }
  - { id: veo, endpoint: video, billing: { tokens_per_video_second: 1000 }, upstreams: [{ provider: gemini, model: veo-3.1-generate-preview }] }
  # No upstream can work (its provider has no api_key): misconfigured. A long id with a '/', as OpenRouter's are.
  - { id: meta-llama/llama-3.3-70b-instruct-turbo, endpoint: chat, upstreams: [{ provider: keyless, model: text-model }] }
  # Priced (US dollars per token); their upstream answers 10 prompt tokens for a 40-character prompt and max_tokens completion tokens.
  - { id: mistral-small, endpoint: chat, pricing: { prompt: "0.000001", completion: "0.000002" }, upstreams: [{ provider: openai, model: exact-model }] }
  - { id: mistral-large, endpoint: chat, pricing: { prompt: "0.000002", completion: "0.000006" }, upstreams: [{ provider: openai, model: exact-model }] }
plans:
  # Spend budgets: $0.0003 a day per key, $5 a month over all of a user's keys. The other models have no price: allowed, at no cost.
  - { id: free, rank: 0, daily_tokens: 100000, requests_per_minute: 20, max_concurrent_jobs: 2, user_daily_tokens: 150000, user_requests_per_minute: 30, max_keys: 5, daily_budget_usd: "0.0003", user_monthly_budget_usd: "5" }
  - { id: pro, rank: 1, daily_tokens: 5000000, requests_per_minute: 300, max_concurrent_jobs: 10 }
default_plan: free
budget_unpriced_models: allow
allow_private_image_urls: true
jobs: { retention_hours: 24, poll_seconds: 0.05, sync_timeout_seconds: 30 }
auth:
  local:
    allow_signup: true
    throttle: { failures_per_address: 1000, signups_per_address: 1000 }
${extra.settings ?? ''}`;

export type DashboardWorld = { gw: TestGateway; text: FakeUpstreams; media: FakeMedia; close(): Promise<void> };

export async function startDashboardWorld(opts: { logger?: Logger; env?: NodeJS.ProcessEnv; extra?: Parameters<typeof dashboardConfig>[2] } = {}): Promise<DashboardWorld> {
  const text = await startFakeUpstreams();
  const media = await startFakeMedia();
  const gw = await startTestGateway({ config: dashboardConfig(text.url, media.url, opts.extra), logger: opts.logger, env: opts.env });
  // The gateway has its first account (the administrator that account's sign-up would make,
  // decision 0033) already: these tests sign up as later users, on the plain user role.
  await gw.services.accounts.createUser({ email: 'first-operator@example.com', name: 'First operator' });
  return {
    gw,
    text,
    media,
    async close() {
      await gw.close();
      await text.close();
      await media.close();
    },
  };
}
