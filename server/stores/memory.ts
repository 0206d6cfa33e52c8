import type { AdmitResult, CounterStore, ReserveResult, WindowResult } from './types.ts';

type Window = { value: number; resetAt: number };
type Hold = { amount: number; expiresAt: number };
/** `reserved` is the sum of `holds`, kept as it changes; `nextExpiry` the earliest hold's expiry. */
type Quota = { settled: number; keepUntil: number; holds: Map<string, Hold>; reserved: number; nextExpiry: number };

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

  // Constant time per call (a scan of the holds only when one of them has expired): this runs
  // on every request with as many holds as requests in flight.
  private quota(key: string, now: number): Quota {
    let q = this.quotas.get(key);
    if (!q) {
      q = { settled: 0, keepUntil: now, holds: new Map(), reserved: 0, nextExpiry: Infinity };
      this.quotas.set(key, q);
    } else if (q.keepUntil <= now) {
      q.settled = 0;
      q.keepUntil = now;
    }
    if (now >= q.nextExpiry) {
      q.reserved = 0;
      q.nextExpiry = Infinity;
      for (const [id, h] of q.holds) {
        if (h.expiresAt <= now) q.holds.delete(id);
        else {
          q.reserved += h.amount;
          q.nextExpiry = Math.min(q.nextExpiry, h.expiresAt);
        }
      }
    }
    return q;
  }

  async reserve(key: string, id: string, amount: number, limit: number, opts: { ttlMs: number; keepUntil: number; now: number }): Promise<ReserveResult> {
    const q = this.quota(key, opts.now);
    const used = q.settled + q.reserved;
    if (used + amount > limit) return { allowed: false, used };
    const expiresAt = opts.now + opts.ttlMs;
    const previous = q.holds.get(id);
    if (previous) q.reserved -= previous.amount;
    q.holds.set(id, { amount, expiresAt });
    q.reserved += amount;
    q.nextExpiry = Math.min(q.nextExpiry, expiresAt);
    q.keepUntil = Math.max(q.keepUntil, opts.keepUntil, expiresAt);
    return { allowed: true, used };
  }

  async admit(rpm: Parameters<CounterStore['admit']>[0], quota: Parameters<CounterStore['admit']>[1], now: number): Promise<AdmitResult> {
    const r = await this.hit(rpm.key, 1, rpm.limit, rpm.windowMs, now);
    if (!r.allowed) return { rpm: r, quota: null };
    return { rpm: r, quota: await this.reserve(quota.key, quota.id, quota.amount, quota.limit, { ttlMs: quota.ttlMs, keepUntil: quota.keepUntil, now }) };
  }

  async settle(key: string, id: string, actual: number, opts: { keepUntil: number; now: number; onlyIfHeld?: boolean }): Promise<number> {
    const q = this.quota(key, opts.now);
    const hold = q.holds.get(id);
    if (!hold && opts.onlyIfHeld) return q.settled;
    if (hold) {
      q.holds.delete(id);
      q.reserved -= hold.amount;
    }
    if (actual > 0) {
      q.settled += actual;
      q.keepUntil = Math.max(q.keepUntil, opts.keepUntil);
    }
    return q.settled;
  }

  async reserved(key: string, now: number) {
    const q = this.quota(key, now);
    return { settled: q.settled, reserved: q.reserved, holders: q.holds.size };
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
