// Quotas, rate limits and the usage ledger through HTTP, on both counter stores.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COST, COUNTER_STORES, EXACT_BODY, startBillingGateway } from '../helpers/billing-gateway.ts';
import { errorBody } from '../helpers/gateway.ts';
import { NO_BUCKETS } from '../helpers/usage.ts';

const N = 5;
const stores = COUNTER_STORES;

describe.each(stores)('%s counters', (_name, env) => {
  let b: Awaited<ReturnType<typeof startBillingGateway>>;
  beforeAll(async () => {
    b = await startBillingGateway({ daily_tokens: N * COST, requests_per_minute: 1000 }, { ...env });
  });
  afterAll(() => b?.close());
  const chat = (key: string, body: object = EXACT_BODY) => b.gw.fetch('/v1/chat/completions', { method: 'POST', key, json: body });
  const ledgerSum = async (key: string) => {
    await b.gw.services.ledger.flush();
    const principal = (await b.gw.services.keys.authenticate(key))!;
    const agg = await b.gw.services.db.prisma.usageRecord.aggregate({ where: { apiKeyId: principal.keyId }, _sum: { billedTokens: true }, _count: { _all: true } });
    return { tokens: Number(agg._sum.billedTokens ?? 0n), count: agg._count._all };
  };

  it(`a quota that fits exactly ${N} requests admits exactly ${N} of ${10 * N} concurrent ones`, async () => {
    const key = await b.gw.newKey();
    const results = await Promise.all(Array.from({ length: 10 * N }, () => chat(key)));
    const ok = results.filter((r) => r.status === 200);
    expect(ok).toHaveLength(N);
    const refused = results.filter((r) => r.status === 429);
    expect(refused).toHaveLength(9 * N);
    expect(await errorBody(refused[0]!)).toMatchObject({ type: 'rate_limit_error', code: 'daily_quota_exceeded' });
    expect(await ledgerSum(key)).toEqual({ tokens: N * COST, count: N });
    const usage: any = await (await b.gw.fetch('/v1/usage', { key })).json();
    expect(usage.limits.daily_tokens).toMatchObject({ limit: N * COST, used: N * COST, remaining: 0 });
    expect(usage.totals).toMatchObject({ requests: N, billed_tokens: N * COST, prompt_tokens: 10 * N, completion_tokens: 20 * N });
  });

  it('requests per minute: exactly the limit of many concurrent requests, then 429 with the reset', async () => {
    const rpm = await startBillingGateway({ daily_tokens: 10_000_000, requests_per_minute: 7 }, { ...env });
    try {
      const key = await rpm.gw.newKey();
      const results = await Promise.all(Array.from({ length: 70 }, () => rpm.gw.fetch('/v1/chat/completions', { method: 'POST', key, json: EXACT_BODY })));
      expect(results.filter((r) => r.status === 200)).toHaveLength(7);
      const refused = results.find((r) => r.status === 429)!;
      const e: any = await errorBody(refused);
      expect(e).toMatchObject({ type: 'rate_limit_error', code: 'rate_limit_exceeded', limit: 7, remaining: 0 });
      expect(Date.parse(e.reset_at) - Date.now()).toBeGreaterThan(55_000);
      expect(e.reset_seconds).toBeGreaterThan(55);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(56);
      expect(refused.headers.get('x-ratelimit-limit-requests')).toBe('7');
      expect(refused.headers.get('x-ratelimit-remaining-requests')).toBe('0');
      expect(refused.headers.get('x-ratelimit-reset-requests')).toBe(e.reset_at);
    } finally {
      await rpm.close();
    }
  });

  it('successful responses carry the rate-limit headers', async () => {
    const key = await b.gw.newKey();
    const res = await chat(key);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-limit-requests')).toBe('1000');
    expect(res.headers.get('x-ratelimit-remaining-requests')).toBe('999');
    expect(res.headers.get('x-ratelimit-limit-tokens')).toBe(String(N * COST));
    expect(res.headers.get('x-ratelimit-remaining-tokens')).toBe(String((N - 1) * COST));
    expect(res.headers.get('x-ratelimit-reset-tokens')).toMatch(/T00:00:00\.000Z$/);
  });

  it('a request that fails before any output is not billed, releases its reservation, and is recorded as an error', async () => {
    const key = await b.gw.newKey();
    const res = await chat(key, { ...EXACT_BODY, model: 'broken' });
    expect(res.status).toBe(502);
    const usage: any = await (await b.gw.fetch('/v1/usage', { key })).json();
    expect(usage.limits.daily_tokens.used).toBe(0);
    // In the ledger as a request with an error status, billed nothing (usage reports count its error).
    expect(await ledgerSum(key)).toEqual({ tokens: 0, count: 1 });
    expect(usage.totals).toMatchObject({ requests: 1, errors: 1, billed_tokens: 0 });
  });

  it('streams bill what the upstream reported, with the multiplier, also when the client leaves', async () => {
    const key = await b.gw.newKey();
    const res = await b.gw.fetch('/v1/messages', { method: 'POST', key, json: { model: 'exact-anthropic', max_tokens: 20, stream: true, messages: [{ role: 'user', content: 'x'.repeat(40) }] } });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    await reader.read();
    await reader.cancel();
    let sum = { tokens: 0, count: 0 };
    for (let i = 0; i < 50 && sum.count === 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      sum = await ledgerSum(key);
    }
    expect(sum).toEqual({ tokens: COST, count: 1 });
  });

  it('premium models need the plan', async () => {
    const key = await b.gw.newKey();
    const res = await chat(key, { ...EXACT_BODY, model: 'gold' });
    expect(res.status).toBe(403);
    expect(await errorBody(res)).toMatchObject({ type: 'permission_error', code: 'model_requires_higher_plan' });
    const gold = await b.gw.newKey('gold');
    expect((await chat(gold, { ...EXACT_BODY, model: 'gold' })).status).toBe(200);
  });
});

describe('windows roll on the clock', () => {
  let b: Awaited<ReturnType<typeof startBillingGateway>>;
  beforeAll(async () => {
    b = await startBillingGateway({ daily_tokens: 2 * COST, requests_per_minute: 3 });
  });
  afterAll(() => b?.close());
  const chat = (key: string) => b.gw.fetch('/v1/chat/completions', { method: 'POST', key, json: EXACT_BODY });
  const at = (iso: string) => (b.gw.services.clock.now = () => Date.parse(iso));

  it('the daily quota resets at 00:00 UTC', async () => {
    const key = await b.gw.newKey();
    at('2026-03-01T23:59:00Z');
    expect((await chat(key)).status).toBe(200);
    expect((await chat(key)).status).toBe(200);
    const refused = await chat(key);
    expect(refused.status).toBe(429);
    const e: any = await errorBody(refused);
    expect(e).toMatchObject({ code: 'daily_quota_exceeded', reset_at: '2026-03-02T00:00:00.000Z', reset_seconds: 60 });
    at('2026-03-01T23:59:59.999Z');
    expect((await chat(key)).status).toBe(429);
    at('2026-03-02T00:00:00Z');
    expect((await chat(key)).status).toBe(200);
    const usage: any = await (await b.gw.fetch('/v1/usage', { key })).json();
    expect(usage.limits.daily_tokens).toMatchObject({ used: COST, reset_at: '2026-03-03T00:00:00.000Z' });
  });

  it('the minute window starts at the first request and lasts 60 s', async () => {
    const key = await b.gw.newKey();
    at('2026-03-05T10:00:30Z');
    expect((await chat(key)).status).toBe(200);
    at('2026-03-05T10:00:50Z');
    expect((await chat(key)).status).toBe(200);
    const usage: any = await (await b.gw.fetch('/v1/usage', { key })).json();
    expect(usage.limits.requests_per_minute).toEqual({ limit: 3, used: 2, remaining: 1, reset_at: '2026-03-05T10:01:30.000Z' });
    at('2026-03-05T10:01:10Z');
    // The daily quota (2 requests) is spent, but the RPM window still counts this third request.
    const third = await chat(key);
    expect((await errorBody(third)).code).toBe('daily_quota_exceeded');
    at('2026-03-05T10:01:29.999Z');
    expect((await errorBody(await chat(key))).code).toBe('rate_limit_exceeded');
    at('2026-03-05T10:01:30Z');
    expect((await errorBody(await chat(key))).code).toBe('daily_quota_exceeded');
  });
});

describe('GET /v1/usage', () => {
  let b: Awaited<ReturnType<typeof startBillingGateway>>;
  beforeAll(async () => {
    b = await startBillingGateway({ daily_tokens: 100 * COST, requests_per_minute: 1000 });
  });
  afterAll(() => b?.close());

  it('breaks the ledger down per model and per day, agreeing with it', async () => {
    const key = await b.gw.newKey();
    const at = (iso: string) => (b.gw.services.clock.now = () => Date.parse(iso));
    at('2026-04-10T12:00:00Z');
    await b.gw.fetch('/v1/chat/completions', { method: 'POST', key, json: EXACT_BODY });
    at('2026-04-12T08:00:00Z');
    await b.gw.fetch('/v1/chat/completions', { method: 'POST', key, json: EXACT_BODY });
    await b.gw.fetch('/v1/messages', { method: 'POST', key, json: { model: 'exact-anthropic', max_tokens: 20, messages: [{ role: 'user', content: 'x'.repeat(40) }] } });
    const res = await b.gw.fetch('/v1/usage?start=2026-04-09&end=2026-04-12', { key });
    expect(res.status).toBe(200);
    const u: any = await res.json();
    expect(u.period).toEqual({ start: '2026-04-09', end: '2026-04-12' });
    // The test models have no price: no cost, every request unpriced.
    expect(u.totals).toEqual({ requests: 3, errors: 0, prompt_tokens: 30, completion_tokens: 60, cached_tokens: 0, reasoning_tokens: 0, billed_tokens: 3 * COST, ...NO_BUCKETS, cost: null, unpriced_requests: 3 });
    expect(u.by_model.map((m: any) => [m.model, m.requests, m.billed_tokens])).toEqual([
      ['exact', 2, 2 * COST],
      ['exact-anthropic', 1, COST],
    ]);
    expect(u.by_day.map((d: any) => [d.date, d.requests])).toEqual([
      ['2026-04-09', 0],
      ['2026-04-10', 1],
      ['2026-04-11', 0],
      ['2026-04-12', 2],
    ]);
    expect(u.limits.daily_tokens).toMatchObject({ used: 2 * COST, remaining: 98 * COST });
    // Ledger rows carry the whole record.
    const rows = await b.gw.services.db.prisma.usageRecord.findMany({ where: { model: 'exact-anthropic' } });
    expect(rows[0]).toMatchObject({ provider: 'anthropic', upstreamModel: 'exact-slow-model', endpoint: 'messages', multiplier: 2, usageSource: 'reported', status: 200, promptTokens: 10, completionTokens: 20, billedTokens: BigInt(COST) });
  });

  it('defaults to the last 7 days, validates dates, and needs a key', async () => {
    const key = await b.gw.newKey();
    b.gw.services.clock.now = () => Date.parse('2026-04-12T08:00:00Z');
    const u: any = await (await b.gw.fetch('/v1/usage', { key })).json();
    expect(u.period).toEqual({ start: '2026-04-06', end: '2026-04-12' });
    expect(u.by_day).toHaveLength(7);
    let res = await b.gw.fetch('/v1/usage?start=2026-02-30', { key });
    expect(res.status).toBe(400);
    expect((await errorBody(res)).param).toBe('start');
    res = await b.gw.fetch('/v1/usage?start=yesterday', { key });
    expect((await errorBody(res)).param).toBe('start');
    expect((await b.gw.fetch('/v1/usage')).status).toBe(401);
  });
});

describe('concurrent job slots', () => {
  it.each(stores)('%s: the cap is exact and slots free on release or expiry', async (_name, env) => {
    const b = await startBillingGateway({ daily_tokens: 1000, requests_per_minute: 1000 }, { ...env });
    try {
      const { acquireJobSlot, releaseJobSlot } = await import('../../server/billing/job-slots.ts');
      const s = b.gw.services;
      const key = await b.gw.newKey();
      const principal = (await s.keys.authenticate(key))!;
      const results = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => acquireJobSlot(s, principal, `job_${i}`, 60_000)));
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(2);
      const refused = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
      expect(refused.reason.toBody().error).toMatchObject({ type: 'rate_limit_error', code: 'too_many_active_jobs', limit: 2, remaining: 0 });
      const held = results.flatMap((r, i) => (r.status === 'fulfilled' ? [`job_${i}`] : []));
      const usage: any = await (await b.gw.fetch('/v1/usage', { key })).json();
      expect(usage.limits.concurrent_jobs).toEqual({ limit: 2, active: 2, remaining: 0 });
      await releaseJobSlot(s, principal, held[0]!);
      await acquireJobSlot(s, principal, 'job_next', 60_000);
      const now = s.clock.now();
      s.clock.now = () => now + 60_001;
      await acquireJobSlot(s, principal, 'job_after_expiry', 60_000);
    } finally {
      await b.close();
    }
  });
});
