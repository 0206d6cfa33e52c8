import type { CounterStore, ReserveResult, WindowResult } from './types.ts';

type Window = { value: number; resetAt: number };
type Quota = { settled: number; keepUntil: number; holds: Map<string, { amount: number; expiresAt: number }> };

/** In-process counters: single-threaded JS makes each call atomic. */
export class MemoryCounterStore implements CounterStore {
  readonly kind = 'memory' as const;
  private readonly windows = new Map<string, Window>();
  private readonly quotas = new Map<string, Quota>();
  private readonly sweeper: NodeJS.Timeout;

  constructor() {
    this.sweeper = setInterval(() => this.sweep(Date.now()), 60_000);
    this.sweeper.unref();
  }

  async hit(key: string, cost: number, limit: number, windowMs: number, now: number): Promise<WindowResult> {
    let w = this.windows.get(key);
    if (!w || w.resetAt <= now) w = { value: 0, resetAt: now + windowMs };
    if (w.value + cost > limit) return { allowed: false, value: w.value, resetAt: w.resetAt };
    w.value += cost;
    this.windows.set(key, w);
    return { allowed: true, value: w.value, resetAt: w.resetAt };
  }

  async peekWindow(key: string, now: number) {
    const w = this.windows.get(key);
    return w && w.resetAt > now ? { ...w } : null;
  }

  private quota(key: string, now: number): Quota {
    let q = this.quotas.get(key);
    if (!q || q.keepUntil <= now) {
      q = { settled: 0, keepUntil: now, holds: q?.holds ?? new Map() };
      this.quotas.set(key, q);
    }
    for (const [id, h] of q.holds) if (h.expiresAt <= now) q.holds.delete(id);
    return q;
  }

  async reserve(key: string, id: string, amount: number, limit: number, opts: { ttlMs: number; keepUntil: number; now: number }): Promise<ReserveResult> {
    const q = this.quota(key, opts.now);
    let used = q.settled;
    for (const h of q.holds.values()) used += h.amount;
    if (used + amount > limit) return { allowed: false, used };
    q.holds.set(id, { amount, expiresAt: opts.now + opts.ttlMs });
    q.keepUntil = Math.max(q.keepUntil, opts.keepUntil, opts.now + opts.ttlMs);
    return { allowed: true, used };
  }

  async settle(key: string, id: string, actual: number, opts: { keepUntil: number; now: number }): Promise<number> {
    const q = this.quota(key, opts.now);
    q.holds.delete(id);
    if (actual > 0) {
      q.settled += actual;
      q.keepUntil = Math.max(q.keepUntil, opts.keepUntil);
    }
    return q.settled;
  }

  async reserved(key: string, now: number) {
    const q = this.quota(key, now);
    let reserved = 0;
    for (const h of q.holds.values()) reserved += h.amount;
    return { settled: q.settled, reserved, holders: q.holds.size };
  }

  async ping() {}

  async close() {
    clearInterval(this.sweeper);
  }

  private sweep(now: number) {
    for (const [k, w] of this.windows) if (w.resetAt <= now) this.windows.delete(k);
    for (const [k, q] of this.quotas) if (q.keepUntil <= now && !q.holds.size) this.quotas.delete(k);
  }
}
