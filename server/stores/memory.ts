import { heldAmount, type AdmitResult, type CounterStore, type HoldSpec, type ReserveResult, type WindowResult, type WindowSpec } from './types.ts';

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
    this.hold(q, id, amount, opts);
    return { allowed: true, used };
  }

  /** Synchronous, so that an admission over several quotas is one step. */
  private hold(q: Quota, id: string, amount: number, opts: { ttlMs: number; keepUntil: number; now: number }): void {
    const expiresAt = opts.now + opts.ttlMs;
    const previous = q.holds.get(id);
    if (previous) q.reserved -= previous.amount;
    q.holds.set(id, { amount, expiresAt });
    q.reserved += amount;
    q.nextExpiry = Math.min(q.nextExpiry, expiresAt);
    q.keepUntil = Math.max(q.keepUntil, opts.keepUntil, expiresAt);
  }

  async admit(windows: WindowSpec[], quotas: HoldSpec[], now: number): Promise<AdmitResult> {
    // Checked before anything is counted: all levels or none.
    const open = windows.map((spec) => {
      const w = this.windows.get(spec.key);
      return !w || w.resetAt <= now ? { value: 0, resetAt: now + spec.windowMs } : w;
    });
    const fits = windows.map((spec, i) => open[i]!.value + 1 <= spec.limit);
    if (!fits.every(Boolean)) return { windows: open.map((w, i) => ({ allowed: fits[i]!, value: w.value, resetAt: w.resetAt })), quotas: null };
    const counted = windows.map((spec, i) => {
      const w = { value: open[i]!.value + 1, resetAt: open[i]!.resetAt };
      this.windows.set(spec.key, w);
      return { allowed: true, ...w };
    });
    const held = quotas.map((spec) => this.quota(spec.key, now));
    const results = quotas.map((spec, i) => {
      const used = held[i]!.settled + held[i]!.reserved;
      return { allowed: used + spec.amount <= spec.limit, used };
    });
    if (results.every((r) => r.allowed)) quotas.forEach((spec, i) => this.hold(held[i]!, spec.id, heldAmount(spec, results[i]!.used), { ttlMs: spec.ttlMs, keepUntil: spec.keepUntil, now }));
    return { windows: counted, quotas: results };
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
