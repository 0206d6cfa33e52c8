// The router alone, on a clock the test moves: strategies' orders, the breaker's open → half-open →
// closed cycle, key cool-downs, key limits and cache affinity.
import { describe, expect, it } from 'vitest';
import { ModelConfig, ProviderConfig, RoutingConfig } from '../../server/config/schema.ts';
import { Router, type Lease, type Routed, type Skip } from '../../server/routing/router.ts';
import { orderUpstreams, rendezvousOrder, weightedOrder } from '../../server/routing/strategies.ts';
import type { Target } from '../../server/routing/targets.ts';
import { createMetrics } from '../../server/runtime/metrics.ts';
import { MemoryCounterStore } from '../../server/stores/memory.ts';
import { MemoryRoutingStateStore } from '../../server/stores/routing-state.ts';
import { UpstreamError } from '../../server/upstream/errors.ts';

const silent = { warn() {}, info() {} };

/** A seeded PRNG (mulberry32): the same sequence every run. */
function seeded(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function setup(routing: Record<string, unknown> = {}, random: () => number = seeded(1)) {
  let now = Date.parse('2026-11-27T12:00:00Z');
  const clock = { now: () => now };
  const router = new Router(RoutingConfig.parse(routing), new MemoryCounterStore(), new MemoryRoutingStateStore(), clock, createMetrics(), silent, random);
  return { router, advance: (ms: number) => (now += ms) };
}

const provider = (id: string, extra: Record<string, unknown> = {}) => ProviderConfig.parse({ id, type: 'openai', base_url: 'http://127.0.0.1:9/v1', api_key: `sk-${id}`, ...extra });
const target = (p: ProviderConfig, weight = 1): Target => ({ provider: p, upstreamModel: 'm', adapter: {} as Target['adapter'], weight });
const model = (strategy: string, upstreams: { provider: string; weight?: number }[], extra: Record<string, unknown> = {}) =>
  ModelConfig.parse({ id: 'm', endpoint: 'chat', strategy, upstreams: upstreams.map((u) => ({ model: 'm', ...u })), ...extra });
const labels = (rs: Routed[]) => rs.map((r) => r.key.label);
const fail = (status: number, retryAfter?: number) => new UpstreamError(`fake ${status}`, status, status >= 500 || status === 429, status >= 500 ? 'upstream_error' : 'upstream_error', retryAfter);
const isLease = (x: Lease | Skip): x is Lease => !('skip' in x);

describe('strategies', () => {
  const a = provider('a');
  const b = provider('b');
  const c = provider('c');

  it('failover: the configured order, every time', () => {
    const { router } = setup();
    const m = model('failover', [{ provider: 'a' }, { provider: 'b' }, { provider: 'c' }]);
    for (let i = 0; i < 5; i++) expect(labels(router.plan(m, [target(a), target(b), target(c)]))).toEqual(['a', 'b', 'c']);
  });

  it('weighted: first in proportion to the weights; weight 0 only ever last; the rest of the order is the failover', () => {
    const random = seeded(42);
    const firsts = { 0: 0, 1: 0, 2: 0 } as Record<number, number>;
    for (let i = 0; i < 8000; i++) {
      const order = weightedOrder([1, 3, 0], random);
      firsts[order[0]!]!++;
      expect(order[2]).toBe(2);
      expect([...order].sort()).toEqual([0, 1, 2]);
    }
    expect(firsts[2]).toBe(0);
    expect(firsts[1]! / 8000).toBeGreaterThan(0.72);
    expect(firsts[1]! / 8000).toBeLessThan(0.78);
  });

  it('least-latency: unmeasured first, then the lowest moving average of time to first byte; exploration now and then', async () => {
    let r = 0.9; // above the exploration share: no exploration
    const { router } = setup({}, () => r);
    const m = model('least-latency', [{ provider: 'a' }, { provider: 'b' }, { provider: 'c' }]);
    const targets = [target(a), target(b), target(c)];
    expect(labels(router.plan(m, targets))).toEqual(['a', 'b', 'c']); // none measured yet
    for (const [i, ms] of [[0, 300], [1, 100], [2, 200]] as const) {
      const lease = (await router.acquire(router.plan(m, [targets[i]!])[0]!, 'req', 0)) as Lease;
      router.succeeded(lease, ms);
      router.end(lease);
    }
    expect(labels(router.plan(m, targets))).toEqual(['b', 'c', 'a']);
    r = 0.01; // exploration: another than the fastest goes first
    expect(labels(router.plan(m, targets))[0]).not.toBe('b');
  });

  it('least-busy: fewest in flight first; ties take turns', async () => {
    const { router } = setup();
    const m = model('least-busy', [{ provider: 'a' }, { provider: 'b' }, { provider: 'c' }]);
    const targets = [target(a), target(b), target(c)];
    const firsts = new Set(Array.from({ length: 3 }, () => labels(router.plan(m, targets))[0]));
    expect(firsts).toEqual(new Set(['a', 'b', 'c']));
    const held: Lease[] = [];
    for (const [i, n] of [[0, 2], [2, 1]] as const) for (let k = 0; k < n; k++) held.push((await router.acquire(router.plan(m, [targets[i]!])[0]!, `r${i}${k}`, 0)) as Lease);
    expect(labels(router.plan(m, targets))).toEqual(['b', 'c', 'a']);
    for (const l of held) router.end(l);
    expect(router.upstreamView('a', 'm').in_flight).toBe(0);
  });

  it('orderUpstreams keeps a single upstream as it is', () => {
    expect(orderUpstreams('least-latency', [{ weight: 1, ewmaMs: null, inFlight: 0 }], { exploration: 1, turn: 0 })).toEqual([0]);
  });
});

describe('circuit breaker', () => {
  const dead = provider('dead');

  it('opens after consecutive failures, lets one probe through when the cool-down ends, reopens for twice as long when it fails, closes when it succeeds', async () => {
    const { router, advance } = setup({ circuit_breaker: { consecutive_failures: 3, cooldown_seconds: 10, max_cooldown_seconds: 60 } });
    const m = model('failover', [{ provider: 'dead' }]);
    const routed = () => router.plan(m, [target(dead)])[0]!;
    for (let i = 0; i < 3; i++) {
      const lease = (await router.acquire(routed(), `r${i}`, 0)) as Lease;
      router.failed(lease, fail(503));
      router.end(lease);
      await Promise.resolve(); // the streak is counted in the (shared) store
    }
    expect(router.upstreamView('dead', 'm')).toMatchObject({ state: 'open', reason: 'http_503; 3 failures in a row' });
    expect(await router.acquire(routed(), 'r3', 0)).toMatchObject({ skip: 'circuit open after http_503; 3 failures in a row' });

    advance(10_000);
    expect(router.upstreamView('dead', 'm').state).toBe('half_open');
    const probe = (await router.acquire(routed(), 'probe1', 0)) as Lease;
    expect(probe.probe).toBe(true);
    // Only one probe at a time.
    expect(await router.acquire(routed(), 'other', 0)).toMatchObject({ skip: 'circuit half-open, its probe under way' });
    router.failed(probe, fail(502));
    router.end(probe);
    const reopened = router.upstreamView('dead', 'm');
    expect(reopened.state).toBe('open');
    advance(19_999);
    expect(isLease(await router.acquire(routed(), 'early', 0))).toBe(false);
    advance(1);
    const probe2 = (await router.acquire(routed(), 'probe2', 0)) as Lease;
    expect(probe2.probe).toBe(true);
    router.succeeded(probe2, 40);
    router.end(probe2);
    expect(router.upstreamView('dead', 'm')).toMatchObject({ state: 'closed', until: null });
    const after = (await router.acquire(routed(), 'after', 0)) as Lease;
    expect(after.probe).toBe(false);
  });

  it('a success of an attempt sent before the breaker opened does not close it: only the probe does', async () => {
    const { router } = setup({ circuit_breaker: { consecutive_failures: 3, cooldown_seconds: 30 } });
    const m = model('failover', [{ provider: 'dead' }]);
    const routed = () => router.plan(m, [target(dead)])[0]!;
    const early = (await router.acquire(routed(), 'early', 0)) as Lease;
    for (let i = 0; i < 3; i++) {
      const lease = (await router.acquire(routed(), `r${i}`, 0)) as Lease;
      router.failed(lease, fail(503));
      router.end(lease);
      await Promise.resolve();
    }
    expect(router.upstreamView('dead', 'm').state).toBe('open');
    router.succeeded(early, 20);
    router.end(early);
    expect(router.upstreamView('dead', 'm').state).toBe('open');
    expect(isLease(await router.acquire(routed(), 'next', 0))).toBe(false);
  });

  it('opens on the error rate over its window once it has enough requests; a success ends a streak; 4xx answers never count', async () => {
    const { router } = setup({ circuit_breaker: { consecutive_failures: 100, error_rate: 0.5, min_requests: 10 } });
    const m = model('failover', [{ provider: 'dead' }]);
    const routed = () => router.plan(m, [target(dead)])[0]!;
    const attempt = async (e: UpstreamError | null) => {
      const lease = (await router.acquire(routed(), 'r', 0)) as Lease;
      if (e) router.failed(lease, e);
      else router.succeeded(lease, 10);
      router.end(lease);
    };
    for (let i = 0; i < 5; i++) await attempt(fail(400));
    for (let i = 0; i < 5; i++) await attempt(null);
    for (let i = 0; i < 4; i++) await attempt(fail(500));
    expect(router.upstreamView('dead', 'm').state).toBe('closed'); // 4 of 9 counted
    await attempt(fail(500));
    expect(router.upstreamView('dead', 'm')).toMatchObject({ state: 'open', reason: 'http_500; error rate 50%' });
  });
});

describe('key pools', () => {
  const pool = provider('pool', { api_key: undefined, api_keys: [{ key: 'sk-1', alias: 'one', requests_per_minute: 2, max_concurrency: 1 }, 'sk-2'] });

  it('each key carries its own credential and label; a key at its limit is passed over; a 429 cools the key down (Retry-After, else a doubling backoff)', async () => {
    const { router, advance } = setup({ key_cooldown: { rate_limited_seconds: 2 } });
    const m = model('failover', [{ provider: 'pool' }], { cache_affinity: false });
    const plan = router.plan(m, [target(pool)]);
    expect(plan.map((r) => [r.key.label, r.provider.api_key])).toEqual([
      ['pool#one', 'sk-1'],
      ['pool#1', 'sk-2'],
    ]);
    const one = plan[0]!;
    const first = (await router.acquire(one, 'a', 0)) as Lease;
    // max_concurrency 1: a second request at the same time is refused by that key.
    expect(await router.acquire(one, 'b', 0)).toMatchObject({ skip: 'key at its max_concurrency (1)' });
    router.succeeded(first, 5);
    router.end(first);
    const second = (await router.acquire(one, 'b', 0)) as Lease;
    router.end(second);
    // requests_per_minute 2: the third within a minute is refused, whatever ended.
    expect(await router.acquire(one, 'c', 0)).toMatchObject({ skip: 'key at its requests_per_minute (2)' });
    advance(60_000);
    const third = (await router.acquire(one, 'c', 0)) as Lease;
    router.failed(third, fail(429));
    router.end(third);
    expect(router.keyView('pool#one')).toMatchObject({ state: 'closed' }); // a 429 rests the key for this model only
    expect(router.keyView('pool#one', 'm')).toMatchObject({ state: 'cooling_down', reason: 'http_429' });
    expect(await router.acquire(one, 'd', 0)).toMatchObject({ skip: 'key cooling down after http_429', retryAt: Date.parse('2026-11-27T12:01:02Z') });
    advance(2_000);
    const again = (await router.acquire(one, 'd', 0)) as Lease;
    router.failed(again, fail(429));
    router.end(again);
    expect((await router.acquire(one, 'e', 0)) as Skip).toMatchObject({ retryAt: Date.parse('2026-11-27T12:01:06Z') }); // doubled: 4 s
    advance(60_000); // past the cool-down, and a new minute for the key's 2 requests
    const ok = (await router.acquire(one, 'e', 0)) as Lease;
    router.failed(ok, fail(429, 30));
    router.end(ok);
    expect((await router.acquire(one, 'f', 0)) as Skip).toMatchObject({ retryAt: Date.parse('2026-11-27T12:02:32Z') }); // Retry-After
  });

  it('without affinity, requests take turns over the keys', () => {
    const { router } = setup();
    const m = model('failover', [{ provider: 'pool' }], { cache_affinity: false });
    const firsts = Array.from({ length: 4 }, () => router.plan(m, [target(pool)])[0]!.key.label);
    expect(firsts).toEqual(['pool#one', 'pool#1', 'pool#one', 'pool#1']);
  });
});

describe('cache affinity', () => {
  const pool = provider('pool', { api_key: undefined, api_keys: ['k0', 'k1', 'k2', 'k3'] });
  const other = provider('other');

  it('one conversation stays on one key of one upstream on every plan and every instance; conversations spread over the keys', () => {
    const a = setup().router;
    const b = setup({}, seeded(99)).router;
    const m = model('weighted', [{ provider: 'pool', weight: 1 }, { provider: 'other', weight: 1 }]);
    const targets = [target(pool), target(other)];
    const firstOf = (r: Router, conv: string) => r.plan(m, targets, { affinity: () => conv })[0]!.key.label;
    const firsts = new Map<string, number>();
    for (let c = 0; c < 400; c++) {
      const chosen = firstOf(a, `prefix:${c}`);
      for (let i = 0; i < 3; i++) expect(firstOf(a, `prefix:${c}`)).toBe(chosen);
      expect(firstOf(b, `prefix:${c}`)).toBe(chosen);
      firsts.set(chosen, (firsts.get(chosen) ?? 0) + 1);
    }
    // Half the conversations per upstream (weights 1:1); the pool's spread over its four keys.
    expect(firsts.get('other')! / 400).toBeGreaterThan(0.4);
    expect(firsts.get('other')! / 400).toBeLessThan(0.6);
    for (const k of ['pool#0', 'pool#1', 'pool#2', 'pool#3']) expect(firsts.get(k)! / 400).toBeGreaterThan(0.07);
  });

  it('under least-latency, a conversation sticks only to an upstream within twice the fastest', async () => {
    const { router } = setup({}, () => 0.9);
    const fast = provider('fast');
    const slow = provider('slow');
    const m = model('least-latency', [{ provider: 'fast' }, { provider: 'slow' }]);
    const targets = [target(fast), target(slow)];
    const measure = async (i: number, ms: number) => {
      const lease = (await router.acquire(router.plan(m, [targets[i]!])[0]!, 'req', 0)) as Lease;
      router.succeeded(lease, ms);
      router.end(lease);
    };
    await measure(0, 100);
    await measure(1, 150);
    const firsts = new Set(Array.from({ length: 60 }, (_, c) => router.plan(m, targets, { affinity: () => `prefix:${c}` })[0]!.key.label));
    expect(firsts).toEqual(new Set(['fast', 'slow'])); // both within 2×: conversations spread, each stays
    for (let i = 0; i < 10; i++) await measure(1, 900);
    for (let c = 0; c < 60; c++) expect(router.plan(m, targets, { affinity: () => `prefix:${c}` })[0]!.key.label).toBe('fast');
  });

  it('moves to the next key while its key cools down, and comes back after', async () => {
    const { router, advance } = setup();
    const m = model('failover', [{ provider: 'pool' }]);
    const plan = () => router.plan(m, [target(pool)], { affinity: () => 'prefix:conversation-1' });
    const order = labels(plan());
    const firstKey = plan()[0]!;
    const lease = (await router.acquire(firstKey, 'a', 0)) as Lease;
    router.failed(lease, fail(429, 5));
    router.end(lease);
    // Same plan order; the first is passed over, so the second of the order answers: on every request.
    expect(labels(plan())).toEqual(order);
    expect(isLease(await router.acquire(plan()[0]!, 'b', 0))).toBe(false);
    expect(isLease(await router.acquire(plan()[1]!, 'b', 1))).toBe(true);
    advance(5_000);
    expect(isLease(await router.acquire(plan()[0]!, 'c', 0))).toBe(true);
  });

  it('rendezvous order: a key removed moves only its own conversations', () => {
    const ids = ['k0', 'k1', 'k2', 'k3'];
    let moved = 0;
    for (let c = 0; c < 500; c++) {
      const before = ids[rendezvousOrder(`c${c}`, ids, [1, 1, 1, 1])[0]!];
      const after = ['k0', 'k1', 'k3'][rendezvousOrder(`c${c}`, ['k0', 'k1', 'k3'], [1, 1, 1])[0]!];
      if (before !== 'k2') expect(after).toBe(before);
      else moved++;
    }
    expect(moved).toBeGreaterThan(90);
  });
});

describe('review fixes', () => {
  const dead = provider('dead');

  it("a 4xx answer never counts against the upstream, and a probe the upstream answers closes its breaker", async () => {
    const { router, advance } = setup({ circuit_breaker: { consecutive_failures: 2, cooldown_seconds: 10 } });
    const m = model('failover', [{ provider: 'dead' }]);
    const routed = () => router.plan(m, [target(dead)])[0]!;
    const attempt = async (e: UpstreamError) => {
      const lease = (await router.acquire(routed(), 'r', 0)) as Lease;
      router.failed(lease, e, 5);
      router.end(lease);
      await Promise.resolve();
      return lease;
    };
    for (let i = 0; i < 5; i++) await attempt(new UpstreamError('gone', 404, true, 'upstream_error'));
    expect(router.upstreamView('dead', 'm').state).toBe('closed');
    await attempt(fail(503));
    await attempt(fail(503));
    expect(router.upstreamView('dead', 'm').state).toBe('open');
    advance(10_000);
    const probe = await attempt(new UpstreamError('gone', 404, true, 'upstream_error'));
    expect(probe.probe).toBe(true);
    expect(router.upstreamView('dead', 'm').state).toBe('closed');
  });

  it('failover leaves an upstream whose own failure it met for the next upstream, not for its other keys', async () => {
    const { router } = setup();
    const pool = provider('pool', { api_key: undefined, api_keys: ['k0', 'k1', 'k2'] });
    const other = provider('other');
    const m = model('failover', [{ provider: 'pool' }, { provider: 'other' }], { cache_affinity: false });
    const { withFailover } = await import('../../server/routing/failover.ts');
    const health = { record: () => 0, recordLateFailure: () => {} };
    const tried: string[] = [];
    const r = await withFailover(
      router.plan(m, [target(pool), target(other)]),
      async (c) => {
        tried.push(c.key.label);
        if (c.provider.id === 'pool') throw fail(503);
        return 'ok';
      },
      { model: 'm', health: health as never, metrics: createMetrics(), router, baseBackoffMs: 1 },
    );
    expect(r.value).toBe('ok');
    expect(tried).toEqual(['pool#0', 'pool#0', 'other']);
  });

  it("an open breaker sets every key of its upstream aside, named once by the provider; a failing upstream's average stays bounded", async () => {
    const { router } = setup({ circuit_breaker: { consecutive_failures: 1 } });
    const pool = provider('pool', { api_key: undefined, api_keys: ['k0', 'k1', 'k2'] });
    const m = model('failover', [{ provider: 'pool' }], { cache_affinity: false });
    const { withFailover } = await import('../../server/routing/failover.ts');
    const health = { record: () => 0, recordLateFailure: () => {} };
    const opts = { model: 'm', health: health as never, metrics: createMetrics(), router, baseBackoffMs: 1 };
    let calls = 0;
    const down = async () => {
      calls++;
      throw fail(503);
    };
    await expect(withFailover(router.plan(m, [target(pool)]), down, opts)).rejects.toMatchObject({ status: 503, message: "All upstreams failed for model 'm': pool#0 [m]: fake 503." });
    expect(calls).toBe(1); // its failure opened the breaker: not retried, and the other keys would fare no better
    await expect(withFailover(router.plan(m, [target(pool)]), down, opts)).rejects.toMatchObject({
      status: 503,
      message: expect.stringMatching(/^No upstream of model 'm' can take the request now: pool \[m\]: circuit open after http_503; 1 failures in a row\. Retry in 30 s\.$/),
    });
    expect(calls).toBe(1); // nothing called: the breaker answered for all three keys
    const open = setup({ circuit_breaker: { enabled: false } }).router; // tried on every request
    for (let i = 0; i < 200; i++) {
      const lease = (await open.acquire(open.plan(model('failover', [{ provider: 'dead' }]), [target(dead)])[0]!, 'r', 0)) as Lease;
      open.failed(lease, fail(503), 5);
      open.end(lease);
    }
    expect(open.upstreamView('dead', 'm').latency_ms_ewma).toBe(30_000);
  });

  it('a pool keeps each key at its configured index when a key before it is unset; a one-key pool is no pool', async () => {
    const { keysOf } = await import('../../server/routing/key-pool.ts');
    const p = ProviderConfig.parse({ id: 'p', type: 'openai', api_keys: ['', { key: 'sk-b' }, { key: 'sk-c', alias: 'c' }] });
    expect(keysOf(p).map((k) => [k.index, k.label, k.pooled])).toEqual([
      [1, 'p#1', true],
      [2, 'p#c', true],
    ]);
    const one = ProviderConfig.parse({ id: 'q', type: 'openai', api_keys: [{ key: '' }, 'sk-only'] });
    expect(keysOf(one).map((k) => [k.label, k.pooled])).toEqual([['q#1', false]]);
    expect(ProviderConfig.parse({ id: 'r', type: 'openai', api_keys: ['', ''] }).api_keys).toBeUndefined();
  });

  it('a 429 with Retry-After 0 rests the key for the base time, and the backoff still grows', async () => {
    const { router } = setup({ key_cooldown: { rate_limited_seconds: 2 } });
    const pool = provider('pool', { api_key: undefined, api_keys: ['k0', 'k1'] });
    const m = model('failover', [{ provider: 'pool' }], { cache_affinity: false });
    const k0 = router.plan(m, [target(pool)]).find((r) => r.key.label === 'pool#0')!;
    const lease = (await router.acquire(k0, 'a', 0)) as Lease;
    router.failed(lease, fail(429, 0));
    router.end(lease);
    expect(await router.acquire(k0, 'b', 0)).toMatchObject({ retryAt: Date.parse('2026-11-27T12:00:02Z') });
  });

  it('a 402 (the account out of credits) rests the key for every model, as a 401 does, for auth_failed_seconds', async () => {
    const { router } = setup({ key_cooldown: { auth_failed_seconds: 5 } });
    const pool = provider('pool', { api_key: undefined, api_keys: ['k0', 'k1'] });
    const m = model('failover', [{ provider: 'pool' }], { cache_affinity: false });
    const k0 = router.plan(m, [target(pool)]).find((r) => r.key.label === 'pool#0')!;
    const lease = (await router.acquire(k0, 'a', 0)) as Lease;
    router.failed(lease, fail(402));
    router.end(lease);
    expect(router.keyView('pool#0')).toMatchObject({ state: 'cooling_down', reason: 'http_402' });
    expect(await router.acquire(k0, 'b', 0)).toMatchObject({ skip: 'key cooling down after http_402', retryAt: Date.parse('2026-11-27T12:00:05Z') });
  });
});
