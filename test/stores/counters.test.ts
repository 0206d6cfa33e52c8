// Both counter stores behave the same: check and count are one atomic step.
import { afterAll, describe, expect, it } from 'vitest';
import { randomToken } from '../../server/auth/secrets.ts';
import { MemoryCounterStore } from '../../server/stores/memory.ts';
import { RedisCounterStore } from '../../server/stores/redis.ts';
import type { CounterStore } from '../../server/stores/types.ts';
import { TEST_REDIS_URL } from '../helpers/gateway.ts';

const stores: [string, () => CounterStore][] = [
  ['memory', () => new MemoryCounterStore()],
  ['redis', () => new RedisCounterStore(TEST_REDIS_URL, `mgtest:${randomToken(8)}:`)],
];

describe.each(stores)('%s store', (_name, make) => {
  const store = make();
  afterAll(() => store.close());

  it('admits exactly the limit under concurrency', async () => {
    const results = await Promise.all(Array.from({ length: 200 }, () => store.consume('rpm', 1, 50, { windowMs: 60_000 })));
    expect(results.filter((r) => r.allowed)).toHaveLength(50);
    expect(Math.max(...results.map((r) => r.value))).toBe(50);
    const resets = new Set(results.map((r) => Math.round(r.resetAt / 1000)));
    expect(resets.size).toBe(1);
  });

  it('refuses a cost that does not fit without counting it', async () => {
    expect(await store.consume('q', 70, 100, { windowMs: 60_000 })).toMatchObject({ allowed: true, value: 70 });
    expect(await store.consume('q', 40, 100, { windowMs: 60_000 })).toMatchObject({ allowed: false, value: 70 });
    expect(await store.consume('q', 30, 100, { windowMs: 60_000 })).toMatchObject({ allowed: true, value: 100 });
  });

  it('starts the window at the first request and ends it after windowMs', async () => {
    const first = await store.consume('w', 1, 1, { windowMs: 300 });
    expect(first.allowed).toBe(true);
    expect((await store.consume('w', 1, 1, { windowMs: 300 })).allowed).toBe(false);
    await new Promise((r) => setTimeout(r, 350));
    const next = await store.consume('w', 1, 1, { windowMs: 300 });
    expect(next.allowed).toBe(true);
    expect(next.resetAt).toBeGreaterThan(first.resetAt);
  });

  it('honours an absolute reset time', async () => {
    const resetAt = Date.now() + 5_000;
    const r = await store.consume('daily', 10, 100, { resetAt });
    expect(Math.abs(r.resetAt - resetAt)).toBeLessThan(50);
  });

  it('adjusts live counters only', async () => {
    await store.consume('adj', 10, 100, { windowMs: 60_000 });
    expect(await store.adjust('adj', -4)).toBe(6);
    expect(await store.peek('adj')).toMatchObject({ value: 6 });
    expect(await store.adjust('gone', 5)).toBe(0);
    expect(await store.peek('gone')).toBeNull();
  });
});

it('two Redis clients (two gateway instances) share one limit', async () => {
  const prefix = `mgtest:${randomToken(8)}:`;
  const a = new RedisCounterStore(TEST_REDIS_URL, prefix);
  const b = new RedisCounterStore(TEST_REDIS_URL, prefix);
  try {
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => (i % 2 ? a : b).consume('shared', 1, 30, { windowMs: 60_000 })));
    expect(results.filter((r) => r.allowed)).toHaveLength(30);
  } finally {
    await a.close();
    await b.close();
  }
});
