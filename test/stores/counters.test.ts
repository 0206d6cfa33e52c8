// Both counter stores behave the same: check and count are one atomic step.
import { afterAll, describe, expect, it } from 'vitest';
import { randomToken } from '../../server/runtime/secrets.ts';
import { MemoryCounterStore } from '../../server/stores/memory.ts';
import { RedisCounterStore } from '../../server/stores/redis.ts';
import { admitted, type CounterStore } from '../../server/stores/types.ts';
import { TEST_REDIS_URL } from '../helpers/gateway.ts';

const stores: [string, () => CounterStore][] = [
  ['memory', () => new MemoryCounterStore()],
  ['redis', () => new RedisCounterStore(TEST_REDIS_URL, `mgtest:${randomToken(8)}:`)],
];
const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);

describe.each(stores)('%s store', (_name, make) => {
  const store = make();
  afterAll(() => store.close());

  it('a window admits exactly the limit under concurrency', async () => {
    const results = await Promise.all(Array.from({ length: 200 }, () => store.hit('rpm', 1, 50, 60_000, T0)));
    expect(results.filter((r) => r.allowed)).toHaveLength(50);
    expect(Math.max(...results.map((r) => r.value))).toBe(50);
    expect(new Set(results.map((r) => r.resetAt))).toEqual(new Set([T0 + 60_000]));
  });

  it('a window starts at its first request and rolls when it ends (caller’s clock)', async () => {
    expect(await store.hit('w', 1, 2, 60_000, T0 + 5_000)).toMatchObject({ allowed: true, value: 1, resetAt: T0 + 65_000 });
    expect(await store.hit('w', 1, 2, 60_000, T0 + 30_000)).toMatchObject({ allowed: true, value: 2, resetAt: T0 + 65_000 });
    expect(await store.hit('w', 1, 2, 60_000, T0 + 64_999)).toMatchObject({ allowed: false, value: 2 });
    expect(await store.peekWindow('w', T0 + 64_999)).toEqual({ value: 2, resetAt: T0 + 65_000 });
    expect(await store.hit('w', 1, 2, 60_000, T0 + 65_000)).toMatchObject({ allowed: true, value: 1, resetAt: T0 + 125_000 });
    expect(await store.peekWindow('w', T0 + 200_000)).toBeNull();
  });

  it('reservations: exact under concurrency, settled to the real amount, released on failure', async () => {
    const opts = { ttlMs: 60_000, keepUntil: T0 + 3_600_000, now: T0 };
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => store.reserve('q', `r${i}`, 10, 250, opts)));
    const admitted = results.map((r, i) => [r.allowed, i] as const).filter(([ok]) => ok).map(([, i]) => i);
    expect(admitted).toHaveLength(25);
    expect(await store.reserved('q', T0)).toEqual({ settled: 0, reserved: 250, holders: 25 });
    // Settle half to less than reserved, release the other half.
    for (const [n, i] of admitted.entries()) await store.settle('q', `r${i}`, n % 2 ? 0 : 4, opts);
    expect(await store.reserved('q', T0)).toEqual({ settled: 13 * 4, reserved: 0, holders: 0 });
    expect((await store.reserve('q', 'big', 250 - 52, 250, opts)).allowed).toBe(true);
    expect(await store.reserve('q', 'one-more', 1, 250, opts)).toEqual({ allowed: false, used: 250 });
  });

  // The Redis store sends the settlements (and admissions) of one event-loop turn together, one
  // script call per quota: each must come out as if it had been sent alone, in order.
  it('settlements made in one turn are applied each as if alone, in order, per quota', async () => {
    const opts = { ttlMs: 60_000, keepUntil: T0 + 3_600_000, now: T0 };
    for (const q of ['{b1}:q', '{b2}:q']) for (let i = 0; i < 4; i++) await store.reserve(q, `s${i}`, 10, 1000, opts);
    const totals = await Promise.all([
      store.settle('{b1}:q', 's0', 3, opts),
      store.settle('{b2}:q', 's0', 5, opts),
      store.settle('{b1}:q', 's1', 4, opts),
      store.settle('{b1}:q', 's1', 4, { ...opts, onlyIfHeld: true }), // a retry of one just applied: nothing more
      store.settle('{b1}:q', 'gone', 6, { ...opts, onlyIfHeld: true }), // never held: nothing
      store.settle('{b1}:q', 'gone', 6, opts), // a plain settlement counts even so
      store.settle('{b2}:q', 's1', 0, opts),
    ]);
    expect(totals).toEqual([3, 5, 7, 7, 7, 13, 5]);
    expect(await store.reserved('{b1}:q', T0)).toEqual({ settled: 13, reserved: 20, holders: 2 });
    expect(await store.reserved('{b2}:q', T0)).toEqual({ settled: 5, reserved: 20, holders: 2 });
  });

  it('admissions of one turn for different keys stay apart', async () => {
    const admit = (k: string, i: number) => store.admit([{ key: `{${k}}:rpm`, limit: 3, windowMs: 60_000 }], [{ key: `{${k}}:quota`, id: `${k}:${i}`, amount: 5, limit: 100, ttlMs: 60_000, keepUntil: T0 + 60_000 }], T0);
    const results = await Promise.all([0, 1, 2, 3, 4].flatMap((i) => [admit('x', i), admit('y', i)]));
    expect(results.map((r) => r.windows[0]!.allowed)).toEqual([true, true, true, true, true, true, false, false, false, false]);
    expect(results.map((r) => r.windows[0]!.value)).toEqual([1, 1, 2, 2, 3, 3, 3, 3, 3, 3]);
    expect(results.map((r) => r.quotas?.[0]!.used ?? null)).toEqual([0, 0, 5, 5, 10, 10, null, null, null, null]);
  });

  it('admission counts the request and reserves quota in one step, exact under concurrency', async () => {
    const rpm = { key: '{k1}:rpm', limit: 30, windowMs: 60_000 };
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) => store.admit([rpm], [{ key: '{k1}:quota', id: `a${i}`, amount: 7, limit: 70, ttlMs: 60_000, keepUntil: T0 + 60_000 }], T0)),
    );
    expect(results.filter((r) => r.windows[0]!.allowed)).toHaveLength(30);
    // Refused by the request limit: nothing reserved.
    expect(results.filter((r) => !r.windows[0]!.allowed).every((r) => r.quotas === null)).toBe(true);
    expect(results.filter((r) => r.quotas?.[0]!.allowed)).toHaveLength(10);
    expect(results.filter(admitted)).toHaveLength(10);
    expect(await store.reserved('{k1}:quota', T0)).toEqual({ settled: 0, reserved: 70, holders: 10 });
    expect(await store.peekWindow('{k1}:rpm', T0)).toEqual({ value: 30, resetAt: T0 + 60_000 });
  });

  // Two API keys of one user: each key's own limits and the user's over both, in one step.
  it('admission over a key and its user: exact at both levels under concurrency, all levels or none', async () => {
    const level = (k: string, rpm: number, daily: number, i: number) => ({
      window: { key: `{u1}:${k}:rpm`, limit: rpm, windowMs: 60_000 },
      quota: { key: `{u1}:${k}:quota`, id: `r:${i}`, amount: 5, limit: daily, ttlMs: 60_000, keepUntil: T0 + 60_000 },
    });
    const admit = (i: number) => {
      const key = level(i % 2 ? 'k1' : 'k2', 5, 100, i);
      const user = level('user', 8, 30, i);
      return store.admit([key.window, user.window], [key.quota, user.quota], T0);
    };
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => admit(i)));
    // The user's window holds 8 requests; each key's at most 5; a request refused at one level is counted at none.
    const counted = results.filter((r) => r.windows.every((w) => w.allowed));
    expect(counted).toHaveLength(8);
    const k1 = (await store.peekWindow('{u1}:k1:rpm', T0))!.value;
    const k2 = (await store.peekWindow('{u1}:k2:rpm', T0))!.value;
    expect(k1 + k2).toBe(8);
    expect(Math.max(k1, k2)).toBeLessThanOrEqual(5);
    expect(await store.peekWindow('{u1}:user:rpm', T0)).toEqual({ value: 8, resetAt: T0 + 60_000 });
    // The user's day holds 6 of them (30 / 5): reserved at both levels; the other 2 at neither.
    expect(results.filter(admitted)).toHaveLength(6);
    expect(results.filter((r) => r.quotas && !admitted(r)).every((r) => r.quotas![0]!.allowed && !r.quotas![1]!.allowed)).toBe(true);
    expect(await store.reserved('{u1}:user:quota', T0)).toEqual({ settled: 0, reserved: 30, holders: 6 });
    const q1 = await store.reserved('{u1}:k1:quota', T0);
    const q2 = await store.reserved('{u1}:k2:quota', T0);
    expect(q1.reserved + q2.reserved).toBe(30);
    expect(q1.holders + q2.holders).toBe(6);
  });

  it('a window with room is not counted when another refuses; quotas alone (job slots) are all or nothing', async () => {
    const key = { key: '{u2}:k:rpm', limit: 10, windowMs: 60_000 };
    const user = { key: '{u2}:user:rpm', limit: 2, windowMs: 60_000 };
    for (let i = 0; i < 2; i++) expect(admitted(await store.admit([key, user], [], T0))).toBe(true);
    const refused = await store.admit([key, user], [], T0);
    expect(refused.windows.map((w) => [w.allowed, w.value])).toEqual([[true, 2], [false, 2]]);
    expect(refused.quotas).toBeNull();
    expect(await store.peekWindow('{u2}:k:rpm', T0)).toEqual({ value: 2, resetAt: T0 + 60_000 });
    // Two slots per key, three per user: the third slot of a key is refused at the key, the fourth of the user at the user.
    const slot = (k: string, id: string) => store.admit([], [{ key: `{u2}:${k}:jobs`, id, amount: 1, limit: 2, ttlMs: 60_000, keepUntil: T0 + 60_000 }, { key: '{u2}:user:jobs', id, amount: 1, limit: 3, ttlMs: 60_000, keepUntil: T0 + 60_000 }], T0);
    const a = [await slot('a', 'j1'), await slot('a', 'j2'), await slot('a', 'j3')];
    expect(a.map((r) => r.quotas!.map((q) => q.allowed))).toEqual([[true, true], [true, true], [false, true]]);
    const b = [await slot('b', 'j4'), await slot('b', 'j5')];
    expect(b.map((r) => r.quotas!.map((q) => q.allowed))).toEqual([[true, true], [true, false]]);
    expect(await store.reserved('{u2}:user:jobs', T0)).toEqual({ settled: 0, reserved: 3, holders: 3 });
    expect(await store.reserved('{u2}:a:jobs', T0)).toMatchObject({ holders: 2 });
    expect(await store.reserved('{u2}:b:jobs', T0)).toMatchObject({ holders: 1 });
  });

  it('a hold with an unbounded part: admitted when its bounded amount fits; holds up to its bound when that fits, else the whole limit', async () => {
    const spec = (id: string, amount: number, upTo?: number) => ({ key: '{u3}:budget', id, amount, upTo, limit: 100, ttlMs: 60_000, keepUntil: T0 + 60_000 });
    const admit = async (id: string, amount: number, upTo?: number) => (await store.admit([], [spec(id, amount, upTo)], T0)).quotas![0]!;
    // Its bound fits: held in full, the rest stays open.
    expect(await admit('a', 10, 30)).toEqual({ allowed: true, used: 0 });
    expect(await store.reserved('{u3}:budget', T0)).toMatchObject({ reserved: 30 });
    // No bound (or one past what remains): the counter reads full until it settles.
    expect(await admit('b', 10, Infinity)).toEqual({ allowed: true, used: 30 });
    expect(await store.reserved('{u3}:budget', T0)).toMatchObject({ reserved: 130, holders: 2 });
    expect(await admit('c', 1)).toEqual({ allowed: false, used: 130 });
    expect(await admit('d', 1, 5)).toEqual({ allowed: false, used: 130 });
    // Settled: released like any hold, what it used counted.
    await store.settle('{u3}:budget', 'b', 25, { keepUntil: T0 + 60_000, now: T0 });
    expect(await store.reserved('{u3}:budget', T0)).toEqual({ settled: 25, reserved: 30, holders: 1 });
    // Its bounded amount must fit, as any request's.
    expect(await admit('e', 50, 60)).toEqual({ allowed: false, used: 55 });
    expect(await admit('f', 40, 60)).toEqual({ allowed: true, used: 55 });
    expect(await store.reserved('{u3}:budget', T0)).toMatchObject({ reserved: 30 + 100 });
  });

  it('a reservation whose holder never settles stops counting after its TTL', async () => {
    const opts = { ttlMs: 1_000, keepUntil: T0 + 3_600_000, now: T0 };
    expect((await store.reserve('crash', 'lost', 90, 100, opts)).allowed).toBe(true);
    expect((await store.reserve('crash', 'next', 20, 100, { ...opts, now: T0 + 999 })).allowed).toBe(false);
    expect(await store.reserve('crash', 'next', 20, 100, { ...opts, now: T0 + 1_000 })).toEqual({ allowed: true, used: 0 });
    // A late settle of the crashed reservation still bills what it used.
    expect(await store.settle('crash', 'lost', 5, { keepUntil: opts.keepUntil, now: T0 + 2_000 })).toBe(5);
  });

  it('the reserved total follows holds that are replaced, settled twice or expire among live ones', async () => {
    const at = (now: number, ttlMs = 10_000) => ({ ttlMs, keepUntil: T0 + 3_600_000, now });
    // 300 live holds and 200 that expire early, then replacements and double settlements.
    await Promise.all(Array.from({ length: 500 }, (_, i) => store.reserve('tot', `h:${i}`, i < 200 ? 3 : 2, 1_000_000, at(T0, i < 200 ? 1_000 : 60_000))));
    expect(await store.reserved('tot', T0)).toEqual({ settled: 0, reserved: 200 * 3 + 300 * 2, holders: 500 });
    expect(await store.reserved('tot', T0 + 1_000)).toEqual({ settled: 0, reserved: 600, holders: 300 });
    await store.reserve('tot', 'h:499', 10, 1_000_000, at(T0 + 1_000, 60_000)); // the same id again: replaced, not added
    expect((await store.reserved('tot', T0 + 1_000)).reserved).toBe(608);
    await store.settle('tot', 'h:499', 4, { keepUntil: T0 + 3_600_000, now: T0 + 1_000 });
    await store.settle('tot', 'h:499', 4, { keepUntil: T0 + 3_600_000, now: T0 + 1_000 }); // a repeat releases nothing more
    await store.settle('tot', 'h:0', 1, { keepUntil: T0 + 3_600_000, now: T0 + 1_000 }); // already expired
    expect(await store.reserved('tot', T0 + 1_000)).toEqual({ settled: 9, reserved: 598, holders: 299 });
    // With every hold gone the total is back at zero: a limit of exactly the settled amount plus one fits.
    expect((await store.reserve('tot', 'last:1', 1, 9 + 1, at(T0 + 60_000))).allowed).toBe(true);
  });

  it('a settlement retried only while held is applied once, whether or not the first attempt landed', async () => {
    const opts = { ttlMs: 60_000, keepUntil: T0 + 3_600_000, now: T0 };
    await store.reserve('retry', 'landed', 30, 1000, opts);
    await store.reserve('retry', 'lost', 30, 1000, opts);
    expect(await store.settle('retry', 'landed', 20, opts)).toBe(20);
    // The retries: one for the settlement that landed (no answer came back), one for the one that never ran.
    expect(await store.settle('retry', 'landed', 20, { ...opts, onlyIfHeld: true })).toBe(20);
    expect(await store.settle('retry', 'lost', 25, { ...opts, onlyIfHeld: true })).toBe(45);
    expect(await store.settle('retry', 'lost', 25, { ...opts, onlyIfHeld: true })).toBe(45);
    expect(await store.reserved('retry', T0)).toEqual({ settled: 45, reserved: 0, holders: 0 });
  });
});

it('two Redis clients (two gateway instances) share one limit', async () => {
  const prefix = `mgtest:${randomToken(8)}:`;
  const a = new RedisCounterStore(TEST_REDIS_URL, prefix);
  const b = new RedisCounterStore(TEST_REDIS_URL, prefix);
  try {
    const hits = await Promise.all(Array.from({ length: 100 }, (_, i) => (i % 2 ? a : b).hit('shared', 1, 30, 60_000, T0)));
    expect(hits.filter((r) => r.allowed)).toHaveLength(30);
    const opts = { ttlMs: 60_000, keepUntil: T0 + 60_000, now: T0 };
    const holds = await Promise.all(Array.from({ length: 100 }, (_, i) => (i % 2 ? a : b).reserve('shared-q', `h${i}`, 7, 70, opts)));
    expect(holds.filter((r) => r.allowed)).toHaveLength(10);
    const admits = await Promise.all(
      Array.from({ length: 100 }, (_, i) => (i % 2 ? a : b).admit([{ key: '{s}:rpm', limit: 40, windowMs: 60_000 }], [{ key: '{s}:quota', id: `x${i}`, amount: 5, limit: 100, ttlMs: 60_000, keepUntil: T0 + 60_000 }], T0)),
    );
    expect(admits.filter((r) => r.windows[0]!.allowed)).toHaveLength(40);
    expect(admits.filter(admitted)).toHaveLength(20);
    // Two keys of one user, half of the admissions through each instance: the user's limits hold across both.
    const user = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        (i % 2 ? a : b).admit(
          [{ key: `{t}:k${i % 3}:rpm`, limit: 15, windowMs: 60_000 }, { key: '{t}:user:rpm', limit: 25, windowMs: 60_000 }],
          [{ key: `{t}:k${i % 3}:quota`, id: `y${i}`, amount: 4, limit: 1000, ttlMs: 60_000, keepUntil: T0 + 60_000 }, { key: '{t}:user:quota', id: `y${i}`, amount: 4, limit: 40, ttlMs: 60_000, keepUntil: T0 + 60_000 }],
          T0,
        ),
      ),
    );
    expect(user.filter((r) => r.windows.every((w) => w.allowed))).toHaveLength(25);
    expect(user.filter(admitted)).toHaveLength(10);
    expect(await a.reserved('{t}:user:quota', T0)).toEqual({ settled: 0, reserved: 40, holders: 10 });
  } finally {
    await a.close();
    await b.close();
  }
});
