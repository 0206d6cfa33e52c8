// Each upstream's circuit breaker (docs/routing.md "Circuit breakers"): opened for every instance
// when the upstream's error rate or its failure streak (counted across instances) passes the
// configured bounds, skipped until its cool-down ends, then half-open: one request of one instance
// probes it; the probe's success closes it, its failure opens it again for twice as long.
import type { RoutingConfig } from '../config/schema.ts';
import type { Clock } from '../runtime/clock.ts';
import type { Metrics } from '../runtime/metrics.ts';
import type { RouteHold } from '../stores/routing-state.ts';
import type { SharedHolds } from './shared-holds.ts';
import type { UpstreamStats } from './upstream-stats.ts';

/** A half-open breaker's probe claim lapses after this, so a probe lost with its instance does not block the upstream. */
const PROBE_TTL_MS = 30_000;

/** Why an upstream may not be tried now, and when it may be again (epoch ms). */
export type BreakerRefusal = { reason: 'circuit_open' | 'circuit_half_open'; text: string; retryAt: number };

/** The upstream a breaker guards, as logs and metrics name it. */
type Guarded = { upstreamId: string; provider: { id: string }; upstreamModel: string };

export class CircuitBreakers {
  /** Upstreams whose shared failure streak this instance added to, with its own count (used when the store is away). */
  private readonly streaks = new Map<string, number>();
  /** Half-open upstreams whose probe this instance sends. */
  private readonly probing = new Set<string>();
  /** Half-open upstreams whose probe another instance holds: not asked again before this time. */
  private readonly probedElsewhere = new Map<string, number>();

  constructor(
    private readonly cfg: RoutingConfig['circuit_breaker'],
    private readonly holds: SharedHolds,
    private readonly stats: UpstreamStats,
    private readonly clock: Clock,
    private readonly metrics: Metrics,
    private readonly log: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void },
  ) {}

  /** The upstream's breaker when it is open or half-open (none while breakers are off). */
  held(up: string): RouteHold | undefined {
    return this.cfg.enabled ? this.holds.get(up) : undefined;
  }

  /** Why the upstream of an open breaker may not be tried now: open, or half-open with its probe under way; null when this request may claim the probe. */
  refusal(up: string, breaker: RouteHold, now: number): BreakerRefusal | null {
    if (now < breaker.until) return { reason: 'circuit_open', text: `circuit open after ${breaker.reason}`, retryAt: breaker.until };
    if (this.probing.has(up) || (this.probedElsewhere.get(up) ?? 0) > now) return this.underWay(now);
    return null;
  }

  /** Claims the half-open upstream's one probe for this instance; a refusal when another instance holds it. */
  async claimProbe(up: string, now: number): Promise<BreakerRefusal | null> {
    const claimed = await this.holds.store.claimProbe(up, PROBE_TTL_MS).catch((err) => (this.holds.warn(err), true));
    if (!claimed) {
      this.probedElsewhere.set(up, now + 1000);
      return this.underWay(now);
    }
    this.probing.add(up);
    return null;
  }

  private underWay(now: number): BreakerRefusal {
    return { reason: 'circuit_half_open', text: 'circuit half-open, its probe under way', retryAt: now + 1000 };
  }

  releaseProbe(up: string): void {
    this.probing.delete(up);
    this.holds.store.releaseProbe(up).catch((err) => this.holds.warn(err));
  }

  /** An attempt ended with neither outcome recorded (the gateway's own failure): the next request may probe. */
  ended(up: string, probe: boolean): void {
    if (probe && this.probing.has(up)) this.releaseProbe(up);
  }

  /**
   * The upstream answered. The probe's answer closes the breaker; any other ends the failure
   * streak but never closes an open breaker (it was sent before the breaker opened and says
   * nothing about now).
   */
  answered(up: string, probe: boolean): void {
    if (probe) this.close(up, true);
    else if (this.streaks.has(up) && this.holds.get(up)?.kind !== 'breaker') {
      this.streaks.delete(up);
      this.holds.store.resetStreak(up).catch((err) => this.holds.warn(err));
    }
  }

  /**
   * The upstream failed on its own account (`late`: after its answer had counted as a success).
   * `streak`: whether it may add to the failure streak (once per request and upstream, so one
   * request that makes an upstream fail cannot open its breaker alone).
   */
  failed(routed: Guarded, reason: string, probe: boolean, streak: boolean, late: boolean): void {
    const cb = this.cfg;
    const up = routed.upstreamId;
    const s = this.stats.window(up);
    if (!late) s.requests++;
    s.errors++;
    if (!cb.enabled) return;
    if (probe) {
      // The probe failed: open again, for twice as long (up to the maximum).
      this.probing.delete(up);
      const before = this.holds.get(up)?.backoffMs ?? cb.cooldown_seconds * 1000;
      this.open(routed, reason, Math.min(before * 2, cb.max_cooldown_seconds * 1000));
      return;
    }
    if (this.holds.get(up)?.kind === 'breaker') return; // already open (another attempt of the same moment)
    if (s.requests >= cb.min_requests && s.errors / s.requests >= cb.error_rate) {
      this.open(routed, `${reason}; error rate ${Math.round((100 * s.errors) / s.requests)}%`, cb.cooldown_seconds * 1000);
      return;
    }
    if (!streak) return;
    // The streak is counted in the store (every instance's failures add up); this instance's own
    // count stands in while the store is away.
    const own = (this.streaks.get(up) ?? 0) + 1;
    this.streaks.set(up, own);
    const check = (n: number) => {
      if (n >= cb.consecutive_failures && this.holds.get(up)?.kind !== 'breaker') this.open(routed, `${reason}; ${n} failures in a row`, cb.cooldown_seconds * 1000);
    };
    this.holds.store.failure(up, cb.window_seconds * 1000).then(check, (err) => {
      this.holds.warn(err);
      check(own);
    });
  }

  private open(routed: Guarded, reason: string, backoffMs: number): void {
    const now = this.clock.now();
    const hold: RouteHold = { target: routed.upstreamId, kind: 'breaker', until: now + backoffMs, since: now, reason, backoffMs };
    this.holds.put(hold);
    this.streaks.delete(hold.target);
    // The error rate starts afresh: the failures that opened it do not reopen it after the probe.
    this.stats.resetWindow(this.stats.of(hold.target), now);
    this.metrics.breakerOpenings.inc({ provider: routed.provider.id, upstream_model: routed.upstreamModel });
    this.log.warn({ provider: routed.provider.id, upstream_model: routed.upstreamModel, reason, cooldown_ms: backoffMs }, 'circuit breaker opened: the upstream is skipped until its cool-down ends, then probed');
  }

  /** The probe succeeded (or the upstream answered it): closed for every instance. */
  private close(up: string, wasProbe: boolean): void {
    this.probing.delete(up);
    this.probedElsewhere.delete(up);
    this.streaks.delete(up);
    const open = this.holds.get(up);
    if (open) this.stats.resetWindow(this.stats.of(up), this.clock.now());
    this.holds.clear(up);
    if (open && wasProbe) this.log.info({ upstream: up }, 'circuit breaker closed: the probe succeeded');
  }
}
