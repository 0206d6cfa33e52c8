// GET /v1/models/status shows the routing decisions: per configured upstream its weight, share of
// the model's attempts and circuit breaker; per key of an `api_keys` pool its share of the
// upstream's attempts, its figures and its cool-down; never a key itself.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { components } from '../../clients/typescript/src/schema.ts';
import { startFakeUpstreams, type FakeUpstreams } from '../helpers/fake-upstreams.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

type Status = components['schemas']['ModelStatus'];

const SECRETS = ['sk-pool-first-0123456789', 'sk-pool-second-0123456789', 'sk-backup-0123456789'];

let fake: FakeUpstreams;
let gw: TestGateway;
let key: string;

beforeAll(async () => {
  fake = await startFakeUpstreams();
  gw = await startTestGateway({
    config: `
providers:
  - { id: openai, type: openai, base_url: "${fake.url}/v1", api_keys: [{ key: ${SECRETS[0]}, alias: primary }, ${SECRETS[1]}] }
  - { id: backup, type: openai, base_url: "${fake.url}/v1", api_key: ${SECRETS[2]} }
models:
  # Weight 0: the backup only ever comes last, so every request goes to the pool, its keys taking turns.
  - { id: pooled, endpoint: chat, strategy: weighted, cache_affinity: false, upstreams: [{ provider: openai, model: text-model, weight: 3 }, { provider: backup, model: text-model, weight: 0 }] }
  # Both keys answer 401: each cools down, and the backup answers.
  - { id: refused, endpoint: chat, upstreams: [{ provider: openai, model: fail401-model }, { provider: backup, model: text-model }] }
  # Two upstreams on one provider: the first fails twice in a row (its breaker opens), the second answers.
  - { id: flaky, endpoint: chat, upstreams: [{ provider: backup, model: fail500-model }, { provider: backup, model: text-model }] }
plans:
  - { id: free, rank: 0, daily_tokens: 1000000, requests_per_minute: 1000 }
routing: { circuit_breaker: { consecutive_failures: 2 } }
`,
  });
  key = await gw.newKey();
});
afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

const chat = (model: string) => gw.fetch('/v1/chat/completions', { method: 'POST', key, json: { model, messages: [{ role: 'user', content: 'hi' }] } });
const statusText = async (q = '') => (await gw.fetch(`/v1/models/status${q}`)).text();
const status = async (model: string): Promise<Status> => (JSON.parse(await statusText(`?model=${model}`)) as { data: Status[] }).data[0]!;

it('lists every configured upstream with its weight and the model strategy before any traffic; a pool lists its keys by label', async () => {
  const s = await status('pooled');
  expect(s.strategy).toBe('weighted');
  expect(s.upstreams).toEqual([
    {
      provider: 'openai',
      upstream_model: 'text-model',
      weight: 3,
      requests: 0,
      errors: 0,
      availability: null,
      latency_ms_p50: null,
      share: null,
      last_error: null,
      last_error_at: null,
      breaker: { state: 'closed', until: null, reason: null },
      in_flight: 0,
      latency_ms_ewma: null,
      keys: ['openai#primary', 'openai#1'].map((label) => ({
        key: label,
        requests: 0,
        errors: 0,
        availability: null,
        latency_ms_p50: null,
        share: null,
        state: 'ready',
        until: null,
        reason: null,
        in_flight: 0,
      })),
    },
    expect.objectContaining({ provider: 'backup', upstream_model: 'text-model', weight: 0, requests: 0, share: null, keys: [] }),
  ]);
});

it('counts each key’s attempts and share of its upstream’s', async () => {
  for (let i = 0; i < 4; i++) {
    const res = await chat('pooled');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-gateway-upstream')).toMatch(/^openai#(primary|1)\b/);
  }
  const s = await status('pooled');
  expect(s).toMatchObject({ strategy: 'weighted', requests: 4, errors: 0 });
  const [openai, backup] = s.upstreams;
  expect(openai).toMatchObject({ provider: 'openai', weight: 3, requests: 4, errors: 0, availability: 1, share: 1, breaker: { state: 'closed' }, in_flight: 0 });
  expect(openai!.latency_ms_ewma).toEqual(expect.any(Number));
  expect(openai!.keys.map((k) => [k.key, k.requests, k.errors, k.availability, k.share, k.state])).toEqual([
    ['openai#primary', 2, 0, 1, 0.5, 'ready'],
    ['openai#1', 2, 0, 1, 0.5, 'ready'],
  ]);
  for (const k of openai!.keys) expect(k.latency_ms_p50).toEqual(expect.any(Number));
  expect(backup).toMatchObject({ provider: 'backup', weight: 0, requests: 0, share: 0, keys: [] });
  // The same figures once written to the database.
  await gw.services.health.flush();
  expect((await status('pooled')).upstreams[0]!.keys.map((k) => [k.key, k.requests])).toEqual([
    ['openai#primary', 2],
    ['openai#1', 2],
  ]);
});

it('shows a key cooling down after a 401, with until and why, on every model that uses it', async () => {
  const before = Date.now();
  expect((await chat('refused')).status).toBe(200);
  const s = await status('refused');
  expect(s).toMatchObject({ requests: 3, errors: 2 });
  const [openai, backup] = s.upstreams;
  expect(openai).toMatchObject({ upstream_model: 'fail401-model', requests: 2, errors: 2, availability: 0, share: 0.6667, last_error: 'http_401' });
  // A key's account, not the upstream: its breaker stays closed.
  expect(openai!.breaker).toEqual({ state: 'closed', until: null, reason: null });
  expect(backup).toMatchObject({ requests: 1, errors: 0, share: 0.3333 });
  for (const k of openai!.keys) {
    expect(k).toMatchObject({ requests: 1, errors: 1, availability: 0, share: 0.5, state: 'cooling_down', reason: 'http_401', in_flight: 0 });
    // auth_failed_seconds: 60 by default.
    expect(Date.parse(k.until!)).toBeGreaterThanOrEqual(before + 59_000);
  }
  // The cool-down is the key's: the pooled model shows it too (its own traffic unchanged).
  const pooled = (await status('pooled')).upstreams[0]!.keys;
  expect(pooled.map((k) => [k.key, k.requests, k.state, k.reason])).toEqual([
    ['openai#primary', 2, 'cooling_down', 'http_401'],
    ['openai#1', 2, 'cooling_down', 'http_401'],
  ]);
});

it('shows an open breaker on its upstream only; two upstreams on one provider share their figures', async () => {
  // Two requests: a request adds to the failure streak once, however many attempts it made.
  expect((await chat('flaky')).status).toBe(200);
  expect((await status('flaky')).upstreams[0]!.breaker.state).toBe('closed');
  expect((await chat('flaky')).status).toBe(200);
  const s = await status('flaky');
  expect(s.strategy).toBe('failover');
  // The second request's first failure opened it: its retry was not sent.
  expect(s).toMatchObject({ requests: 5, errors: 3 });
  const [failing, working] = s.upstreams;
  expect(failing).toMatchObject({ provider: 'backup', upstream_model: 'fail500-model', breaker: { state: 'open', reason: 'http_500; 2 failures in a row' } });
  expect(Date.parse(failing!.breaker.until!)).toBeGreaterThan(Date.now());
  expect(working).toMatchObject({ provider: 'backup', upstream_model: 'text-model', breaker: { state: 'closed', until: null, reason: null } });
  // Samples name the provider, not the upstream model: both entries carry the provider's figures.
  for (const u of [failing, working]) expect(u).toMatchObject({ requests: 5, errors: 3, share: 1, keys: [] });
  // The live figures are the upstream's own: a failure counts as a slow answer (at least 1 s) in the failing one's average.
  expect(failing!.latency_ms_ewma).toBeGreaterThanOrEqual(1000);
  expect(working!.latency_ms_ewma).toBeLessThan(1000);
});

it('never shows a key itself', async () => {
  const body = await statusText('?window=1h');
  expect(body).toContain('openai#primary');
  for (const secret of SECRETS) expect(body).not.toContain(secret);
  for (const secret of SECRETS) expect(body).not.toContain(secret.slice(0, 12));
});
