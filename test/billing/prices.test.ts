// Buckets that never overlap, prices in exact decimal, weights applied once before the multiplier.
import { describe, expect, it } from 'vitest';
import { bucketsOf, resolveWeights } from '../../server/billing/buckets.ts';
import { PriceList, toNano, usdText } from '../../server/billing/prices.ts';
import { QuotaBilling } from '../../server/billing/service.ts';
import { MemoryCounterStore } from '../../server/stores/memory.ts';
import type { UsageReport } from '../../server/billing/hooks.ts';
import type * as C from '../../server/translate/canonical.ts';

const usage = (u: Partial<C.Usage>): C.Usage => ({ inputTokens: 0, outputTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, ...u });

// Claude Sonnet 4.5's list prices (per token): what Anthropic's invoice charges.
const SONNET = new PriceList({
  prompt: '0.000003',
  completion: '0.000015',
  input_cache_read: '0.0000003',
  input_cache_write: '0.00000375',
  input_cache_write_1h: '0.000006',
  web_search: '0.01',
});

describe('buckets', () => {
  it('split the totals into parts that add up to them', () => {
    // An Anthropic answer: 120 uncached + 3,000 read + 1,500 written (500 for an hour), 400 out.
    const b = bucketsOf(usage({ inputTokens: 4620, outputTokens: 400, cachedTokens: 3000, cacheWriteTokens: 1500, cacheWrite1hTokens: 500, reasoningTokens: 150 }));
    expect(b).toEqual({ input: 120, cache_read: 3000, cache_write: 1000, cache_write_1h: 500, audio_input: 0, image_input: 0, output: 250, reasoning: 150, audio_output: 0, image_output: 0 });
  });

  it('are never negative: a part larger than its total is cut to it, in order', () => {
    expect(bucketsOf(usage({ inputTokens: 100, outputTokens: 10, cachedTokens: 80, cacheWriteTokens: 50, audioInputTokens: 7, reasoningTokens: 30 }))).toEqual({
      input: 0,
      cache_read: 80,
      cache_write: 20,
      cache_write_1h: 0,
      audio_input: 0,
      image_input: 0,
      output: 0,
      reasoning: 10,
      audio_output: 0,
      image_output: 0,
    });
    expect(bucketsOf(usage({ inputTokens: -5, outputTokens: Number.NaN, cachedTokens: 3 }))).toMatchObject({ input: 0, cache_read: 0, output: 0 });
  });
});

describe('cost', () => {
  it('prices each bucket once, exactly', () => {
    const u = usage({ inputTokens: 4620, outputTokens: 400, cachedTokens: 3000, cacheWriteTokens: 1500, cacheWrite1hTokens: 500, webSearchCalls: 2 });
    // 120 × 0.000003 + 3000 × 0.0000003 + 1000 × 0.00000375 + 500 × 0.000006 + 400 × 0.000015 + 2 × 0.01
    // = 0.00036 + 0.0009 + 0.00375 + 0.003 + 0.006 + 0.02
    expect(usdText(SONNET.cost(u)!)).toBe('0.03401');
  });

  it('is exact where binary floats are not', () => {
    const list = new PriceList({ prompt: '0.1', completion: '0.2' });
    expect(usdText(list.cost(usage({ inputTokens: 1, outputTokens: 1 }))!)).toBe('0.3');
    expect(0.1 + 0.2).not.toBe(0.3);
  });

  it('falls back: cache reads to the input price, reasoning to the output price; unknown otherwise', () => {
    const plain = new PriceList({ prompt: '0.000001', completion: '0.000002' });
    expect(usdText(plain.cost(usage({ inputTokens: 100, cachedTokens: 40, outputTokens: 50, reasoningTokens: 20 }))!)).toBe('0.0002');
    // A cache write, audio or a provider search without a price: the cost is unknown, never 0.
    expect(plain.cost(usage({ inputTokens: 100, cacheWriteTokens: 10 }))).toBeNull();
    expect(plain.cost(usage({ inputTokens: 100, audioInputTokens: 10 }))).toBeNull();
    expect(plain.cost(usage({ inputTokens: 100, webSearchCalls: 1 }))).toBeNull();
    expect(new PriceList(null).cost(usage({ inputTokens: 1 }))).toBeNull();
  });

  it('nothing used costs 0, whatever is known; a request price is added to work done', () => {
    expect(usdText(new PriceList(null).cost(usage({}))!)).toBe('0');
    expect(usdText(new PriceList(null).cost(null)!)).toBe('0');
    const perRequest = new PriceList({ prompt: '0.000001', completion: '0.000001', request: '0.005' });
    expect(usdText(perRequest.cost(usage({ inputTokens: 10, outputTokens: 10 }))!)).toBe('0.00502');
  });

  it('prices units of work', () => {
    expect(usdText(new PriceList({ image: '0.04' }).cost(null, { unit: 'image', quantity: 3 })!)).toBe('0.12');
    expect(usdText(new PriceList({ audio_minute: '0.006' }).cost(null, { unit: 'audio_minute', quantity: 2.5 })!)).toBe('0.015');
    expect(new PriceList({ image: '0.04' }).cost(null, { unit: 'video_second', quantity: 8 })).toBeNull();
  });

  it('holds the most a request can cost: input at the dearest input price, output at the dearest output price', () => {
    // 1,000 in at the 1-hour write price, 500 out.
    expect(usdText(SONNET.maxCost({ input: 1000, output: 500 })!)).toBe('0.0135');
    expect(new PriceList({ completion: '0.1' }).maxCost({ input: 10, output: 10 })).toBeNull();
    expect(toNano(SONNET.maxCost({ input: 1, output: 0 })!)).toBe(6000);
    // Nano-dollars round up: a budget is never undercounted.
    expect(toNano(new PriceList({ prompt: '0.0000000001' }).maxCost({ input: 1, output: 0 })!)).toBe(1);
  });
});

describe('weights', () => {
  const ledger = { write() {} } as never;
  const model = (weights?: Record<string, number>) => ({ id: 'm', endpoint: 'chat' as const, token_multiplier: 1, premium: false, required_plan: 'free', upstreams: [], billing: weights ? { weights } : undefined });
  const billing = (m: ReturnType<typeof model>) =>
    new QuotaBilling({ webSearchSurchargeTokens: 1000 } as never, new MemoryCounterStore(), ledger, { now: () => 0 } as never, () => m as never);
  const report = (u: C.Usage): UsageReport => ({ requestId: 'r', model: 'm', endpoint: 'chat', provider: null, upstreamModel: null, usage: u, estimated: false, status: 200, errorCode: null, latencyMs: 1 });
  const claude = usage({ inputTokens: 4620, outputTokens: 400, cachedTokens: 3000, cacheWriteTokens: 1500, cacheWrite1hTokens: 500 });

  it('default to 1: the quota is the totals, as before weights', () => {
    expect(billing(model()).billedTokens(report(claude), 1)).toBe(5020);
    expect(resolveWeights(undefined)).toMatchObject({ cache_read: 1, cache_write_1h: 1 });
  });

  it('apply once per bucket, exactly, before the multiplier (rounded up once)', () => {
    const b = billing(model({ cache_read: 0.1, cache_write: 1.25 }));
    // 120 + 3000 × 0.1 + 1000 × 1.25 + 500 × 1.25 (1-hour writes weigh what writes do) + 400 = 2695
    expect(b.billedTokens(report(claude), 1)).toBe(2695);
    // × 1.1 = 2964.5 → 2965; never 2966 from a float's 2964.5000000000005.
    expect(b.billedTokens(report(claude), 1.1)).toBe(2965);
    // 1,000 cache reads at 0.1 are 100 tokens, not 101.
    expect(b.billedTokens(report(usage({ inputTokens: 1000, cachedTokens: 1000 })), 1)).toBe(100);
  });
});
