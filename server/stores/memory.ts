import type { CounterStore, WindowResult } from './types.ts';

type Entry = { value: number; resetAt: number };

/** In-process counters: single-threaded JS makes each call atomic. */
export class MemoryCounterStore implements CounterStore {
  readonly kind = 'memory' as const;
  private readonly entries = new Map<string, Entry>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly now: () => number = Date.now) {
    this.sweeper = setInterval(() => this.sweep(), 60_000);
    this.sweeper.unref();
  }

  private live(key: string): Entry | undefined {
    const e = this.entries.get(key);
    if (e && e.resetAt <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return e;
  }

  async consume(key: string, cost: number, limit: number, window: { windowMs: number } | { resetAt: number }): Promise<WindowResult> {
    const e = this.live(key);
    const current = e?.value ?? 0;
    const resetAt = e?.resetAt ?? ('resetAt' in window ? window.resetAt : this.now() + window.windowMs);
    if (current + cost > limit) return { allowed: false, value: current, resetAt };
    this.entries.set(key, { value: current + cost, resetAt });
    return { allowed: true, value: current + cost, resetAt };
  }

  async adjust(key: string, delta: number): Promise<number> {
    const e = this.live(key);
    if (!e) return 0;
    e.value += delta;
    return e.value;
  }

  async peek(key: string) {
    const e = this.live(key);
    return e ? { value: e.value, resetAt: e.resetAt } : null;
  }

  async ping() {}

  async close() {
    clearInterval(this.sweeper);
  }

  private sweep() {
    const now = this.now();
    for (const [k, e] of this.entries) if (e.resetAt <= now) this.entries.delete(k);
  }
}
