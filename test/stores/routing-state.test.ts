// The shared routing state behaves alike in memory and in Redis: holds, failure streaks, one probe.
import { afterAll, describe, expect, it } from 'vitest';
import { randomToken } from '../../server/runtime/secrets.ts';
import { RedisCounterStore } from '../../server/stores/redis.ts';
import { MemoryRoutingStateStore, RedisRoutingStateStore, type RouteHold, type RoutingStateStore } from '../../server/stores/routing-state.ts';
import { TEST_REDIS_URL } from '../helpers/gateway.ts';

const redis = new RedisCounterStore(TEST_REDIS_URL, `mgtest:${randomToken(8)}:`);
afterAll(() => redis.close());

const stores: [string, () => RoutingStateStore][] = [
  ['memory', () => new MemoryRoutingStateStore()],
  ['redis', () => new RedisRoutingStateStore(redis)],
];

describe.each(stores)('%s', (_name, make) => {
  const hold = (target: string, until: number): RouteHold => ({ target, kind: 'breaker', until, since: until - 30_000, reason: 'http_503; 5 failures in a row', backoffMs: 30_000 });

  it('keeps one hold per target, replaced by the next and ended by clear', async () => {
    const s = make();
    const target = `up:p-${randomToken(4)}/m`;
    await s.put(hold(target, 1_000));
    await s.put(hold(target, 2_000));
    expect((await s.snapshot()).filter((h) => h.target === target)).toEqual([hold(target, 2_000)]);
    await s.clear(target);
    expect((await s.snapshot()).filter((h) => h.target === target)).toEqual([]);
  });

  it('counts a failure streak until it is cleared', async () => {
    const s = make();
    const target = `up:p-${randomToken(4)}/m`;
    expect([await s.failure(target, 60_000), await s.failure(target, 60_000), await s.failure(target, 60_000)]).toEqual([1, 2, 3]);
    await s.clear(target);
    expect(await s.failure(target, 60_000)).toBe(1);
  });

  it('gives the probe of a half-open breaker to one caller until its claim lapses or the hold changes', async () => {
    const s = make();
    const target = `up:p-${randomToken(4)}/m`;
    const claims = await Promise.all(Array.from({ length: 5 }, () => s.claimProbe(target, 60_000)));
    expect(claims.filter(Boolean)).toHaveLength(1);
    await s.put(hold(target, 5_000)); // the probe failed: opened again
    expect(await s.claimProbe(target, 100)).toBe(true);
    await new Promise((r) => setTimeout(r, 150));
    expect(await s.claimProbe(target, 100)).toBe(true);
  });
});
