// GET /v1/models/status from scripted failures against the fake upstreams, on an injected clock.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { errorBody } from '../helpers/gateway.ts';
import { startTextGateway } from '../helpers/text-gateway.ts';

let t: Awaited<ReturnType<typeof startTextGateway>>;
const T0 = Date.parse('2026-05-01T10:00:00Z');
beforeAll(async () => {
  t = await startTextGateway();
  t.gw.services.clock.now = () => T0;
  const chat = (model: string) => t.gw.fetch('/v1/chat/completions', { method: 'POST', key: t.key, json: { model, messages: [{ role: 'user', content: 'hi' }] } });
  // Each `failover` request: 2 × HTTP 500 (openai), 2 × HTTP 429 (anthropic), then gemini answers.
  for (let i = 0; i < 2; i++) expect((await chat('failover')).status).toBe(200);
  await t.gw.services.health.flush();
  t.gw.services.clock.now = () => T0 + 3_600_000;
  for (let i = 0; i < 3; i++) expect((await chat('gemini-text')).status).toBe(200);
  // The last attempts stay unwritten: the report merges this instance's pending minutes.
});
afterAll(() => t?.close());

const status = async (q: string) => (await (await t.gw.fetch(`/v1/models/status${q}`)).json()) as any;

it('is public and covers every catalog model', async () => {
  const res = await t.gw.fetch('/v1/models/status');
  expect(res.status).toBe(200);
  const body: any = await res.json();
  expect(body.data.map((m: any) => m.model)).toEqual(t.gw.services.catalog.entries.map((e) => e.id));
  expect(body.data.find((m: any) => m.model === 'compat-text')).toMatchObject({ status: 'unknown', requests: 0, availability: null, history: expect.any(Array) });
});

it('counts every attempt, failovers included, per upstream with the last error class', async () => {
  const { data, window } = await status('?model=failover&window=24h');
  expect(window).toEqual({ start: '2026-04-30T12:00:00.000Z', end: '2026-05-01T12:00:00.000Z', bucket_seconds: 3600 });
  const m = data[0];
  expect(m).toMatchObject({ model: 'failover', requests: 10, errors: 8, availability: 0.2, error_rate: 0.8, latency_ms_p50: expect.any(Number) });
  expect(m.upstreams).toEqual(
    expect.arrayContaining([
      expect.objectContaining({ provider: 'openai', requests: 4, errors: 4, availability: 0, last_error: 'http_500' }),
      expect.objectContaining({ provider: 'anthropic', requests: 4, errors: 4, availability: 0, last_error: 'http_429' }),
      expect.objectContaining({ provider: 'gemini', requests: 2, errors: 0, availability: 1, last_error: null }),
    ]),
  );
  // Both failed in the same (frozen) instant: either is the latest.
  expect(['http_500', 'http_429']).toContain(m.last_error);
  expect(m.history).toHaveLength(24);
  const hour = m.history.find((h: any) => h.start === '2026-05-01T10:00:00.000Z');
  expect(hour).toMatchObject({ requests: 10, errors: 8, availability: 0.2 });
  expect(m.history.filter((h: any) => h.requests > 0)).toHaveLength(1);
  // No attempt in the last 15 minutes (now is 11:00): state unknown.
  expect(m.status).toBe('unknown');
});

it('derives the current state from the last 15 minutes', async () => {
  expect((await status('?model=gemini-text')).data[0]).toMatchObject({ status: 'operational', requests: 3, errors: 0, availability: 1 });
  t.gw.services.clock.now = () => T0 + 5 * 60_000;
  expect((await status('?model=failover')).data[0].status).toBe('down');
  t.gw.services.clock.now = () => T0 + 3_600_000;
});

it('has 5-minute buckets for an hour and daily ones for 30 days', async () => {
  const hour = await status('?model=gemini-text&window=1h');
  expect(hour.window.bucket_seconds).toBe(300);
  expect(hour.data[0].history).toHaveLength(12);
  expect(hour.data[0].history.at(-1)).toMatchObject({ requests: 3, availability: 1 });
  const month = await status('?model=failover&window=30d');
  expect(month.window.bucket_seconds).toBe(86_400);
  expect(month.data[0].history.at(-1)).toMatchObject({ requests: 10 });
});

it('rejects unknown models and windows', async () => {
  expect(await errorBody(await t.gw.fetch('/v1/models/status?model=nope'))).toMatchObject({ code: 'model_not_found' });
  expect(await errorBody(await t.gw.fetch('/v1/models/status?window=2y'))).toMatchObject({ param: 'window' });
});
