// GET /v1/models/status for models none of whose upstreams can work (their provider has no
// api_key): marked `misconfigured` with the reason config check gives, whatever the traffic, and
// their failed requests counted as errors of that upstream instead of leaving them "unknown".
// A model with one working upstream after a keyless one is not penalised for the skip.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startFakeUpstreams, type FakeUpstreams } from '../helpers/fake-upstreams.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

let fake: FakeUpstreams;
let gw: TestGateway;
let key: string;

type Status = {
  model: string;
  status: string;
  problem: string | null;
  requests: number;
  errors: number;
  last_error: string | null;
  upstreams: { provider: string; requests: number; errors: number; availability: number | null; share: number | null; last_error: string | null }[];
};

beforeAll(async () => {
  fake = await startFakeUpstreams();
  gw = await startTestGateway({
    config: `
providers:
  - { id: openai, type: openai, base_url: "${fake.url}/v1", api_key: sk-openai-secret }
  - { id: keyless, type: openai, base_url: "${fake.url}/v1" }
  - { id: nokey, type: anthropic, base_url: "${fake.url}/v1" }
models:
  - { id: broken, endpoint: chat, upstreams: [{ provider: keyless, model: text-model }, { provider: nokey, model: text-model }] }
  - { id: half, endpoint: chat, upstreams: [{ provider: keyless, model: text-model }, { provider: openai, model: text-model }] }
  - { id: fine, endpoint: chat, upstreams: [{ provider: openai, model: text-model }] }
plans:
  - { id: free, rank: 0, daily_tokens: 100000, requests_per_minute: 100 }
`,
  });
  key = await gw.newKey();
});
afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

const chat = (model: string) => gw.fetch('/v1/chat/completions', { method: 'POST', key, json: { model, messages: [{ role: 'user', content: 'hi' }] } });
const status = async (model: string): Promise<Status> => ((await (await gw.fetch(`/v1/models/status?model=${model}`)).json()) as { data: Status[] }).data[0]!;

it('marks a model none of whose upstreams can work misconfigured, with the reason, before any traffic', async () => {
  const all = (await (await gw.fetch('/v1/models/status')).json()) as { data: Status[] };
  expect(all.data.map((m) => [m.model, m.status, m.problem])).toEqual([
    ['broken', 'misconfigured', 'keyless has no api_key; nokey has no api_key'],
    ['half', 'unknown', null],
    ['fine', 'unknown', null],
  ]);
  // Every configured upstream is listed, in the config's order, before any traffic.
  expect(all.data[0]).toMatchObject({ requests: 0, errors: 0 });
  expect(all.data[0]!.upstreams.map((u) => [u.provider, u.requests, u.share])).toEqual([
    ['keyless', 0, null],
    ['nokey', 0, null],
  ]);
});

it('counts a failed request to it as an error of each skipped upstream, and stays misconfigured', async () => {
  const res = await chat('broken');
  expect(res.status).toBe(502);
  expect(((await res.json()) as { error: { code: string } }).error.code).toBe('all_upstreams_failed');
  // Nothing was sent upstream.
  expect(fake.requests).toHaveLength(0);
  const s = await status('broken');
  expect(s).toMatchObject({ status: 'misconfigured', requests: 2, errors: 2, availability: 0, error_rate: 1, last_error: 'not_configured' });
  const skipped = { upstream_model: 'text-model', weight: 1, requests: 1, errors: 1, availability: 0, latency_ms_p50: 0, share: 0.5, last_error: 'not_configured', last_error_at: expect.any(String) };
  // Never tried: its breaker stays closed, nothing in flight, no latency measured; no key pool.
  const idle = { breaker: { state: 'closed', until: null, reason: null }, in_flight: 0, latency_ms_ewma: null, keys: [] };
  expect(s.upstreams).toEqual([
    { provider: 'keyless', ...skipped, ...idle },
    { provider: 'nokey', ...skipped, ...idle },
  ]);
  // Written to the database like any attempt: the report after a flush is the same.
  await gw.services.health.flush();
  expect(await status('broken')).toEqual(s);
});

it('does not count the skip when another upstream answered', async () => {
  expect((await chat('half')).status).toBe(200);
  const s = await status('half');
  expect(s).toMatchObject({ status: 'operational', problem: null, requests: 1, errors: 0, last_error: null });
  expect(s.upstreams.map((u) => [u.provider, u.requests, u.errors, u.share])).toEqual([
    ['keyless', 0, 0, 0],
    ['openai', 1, 0, 1],
  ]);
});
