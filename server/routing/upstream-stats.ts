// Each upstream's and pooled key's live numbers on this instance: the requests in flight and the
// latency average that least-latency orders by (and the health views show), and the error-rate
// window the circuit breaker reads.
import type { RoutingConfig } from '../config/schema.ts';
import type { Clock } from '../runtime/clock.ts';

export type Stats = { inFlight: number; ewmaMs: number | null; windowStart: number; requests: number; errors: number };

export class UpstreamStats {
  private readonly stats = new Map<string, Stats>();

  constructor(
    private readonly cfg: Pick<RoutingConfig, 'least_latency' | 'circuit_breaker'>,
    private readonly clock: Clock,
  ) {}

  /** The target's numbers, made at their first use. */
  of(target: string): Stats {
    let s = this.stats.get(target);
    if (!s) this.stats.set(target, (s = { inFlight: 0, ewmaMs: null, windowStart: this.clock.now(), requests: 0, errors: 0 }));
    return s;
  }

  /** The target's numbers if it has any (read without making them). */
  peek(target: string): Stats | undefined {
    return this.stats.get(target);
  }

  /** One latency into the target's moving average. */
  sample(s: Stats, ms: number): void {
    const alpha = this.cfg.least_latency.smoothing;
    s.ewmaMs = s.ewmaMs === null ? ms : s.ewmaMs + alpha * (ms - s.ewmaMs);
  }

  /** The upstream's error-rate window, rolled over when it has run out. */
  window(up: string): Stats {
    const s = this.of(up);
    const now = this.clock.now();
    if (now - s.windowStart >= this.cfg.circuit_breaker.window_seconds * 1000) this.resetWindow(s, now);
    return s;
  }

  resetWindow(s: Stats, now = this.clock.now()): void {
    s.windowStart = now;
    s.requests = 0;
    s.errors = 0;
  }
}
