// Which upstream and key a request goes to, and whether each may be tried now (docs/routing.md):
// the model's strategy orders its upstreams, cache affinity keeps a prompt prefix on one key, key
// pools stay under each key's limits (counted across instances in the counter store), keys that
// got 429/401/402/403 cool down, and an upstream that keeps failing has its circuit breaker opened
// for every instance (routing-state store), then probed with one request.
//
// This file plans and runs an attempt's admission and its outcome through the parts, each in its
// own module: the live numbers (upstream-stats.ts), the holds every instance shares
// (shared-holds.ts), the breakers (breaker.ts), key cool-downs (key-cooldowns.ts) and key limits
// (key-limits.ts).
import { randomUUID } from 'node:crypto';
import type { ModelConfig, RoutingConfig } from '../config/schema.ts';
import type { Clock } from '../runtime/clock.ts';
import type { Metrics } from '../runtime/metrics.ts';
import type { CounterStore } from '../stores/index.ts';
import type { RoutingStateStore } from '../stores/routing-state.ts';
import type { UpstreamError } from '../upstream/errors.ts';
import { CircuitBreakers } from './breaker.ts';
import { KeyCooldowns, coolsDown } from './key-cooldowns.ts';
import { KeyLimitCounters } from './key-limits.ts';
import { keysOf, type PoolKey } from './key-pool.ts';
import { SharedHolds } from './shared-holds.ts';
import { affinityEligible, orderUpstreams, rendezvousOrder, type UpstreamView } from './strategies.ts';
import type { Target } from './targets.ts';
import { UpstreamStats } from './upstream-stats.ts';

/** A candidate of one request: an upstream of the model with one key of its provider (its `provider` carries that key). */
export type Routed<T extends Target = Target> = T & { key: PoolKey; upstreamId: string };

/** What the request tells the router: its affinity key (asked for only when it can matter). */
export type RouteHint = { affinity?: () => string | null };

/**
 * A candidate that may not be tried now: why, and when it may be again (epoch ms, and from now on
 * the router's clock). `upstream`:
 * the reason is its upstream's (a breaker), so none of the upstream's keys may be tried either.
 */
export type Skip = { skip: string; retryAt: number; retryInMs: number; upstream?: true };

/** A candidate being tried: released by `end` (once), whatever the outcome. */
export type Lease = { routed: Routed; probe: boolean; holdId: string; tokens: number; ended: boolean };

/** Live state of an upstream or a key on this instance, with the shared hold (breaker, cool-down) if any. */
export type TargetView = {
  state: 'closed' | 'open' | 'half_open' | 'cooling_down';
  until: string | null;
  reason: string | null;
  in_flight: number;
  latency_ms_ewma: number | null;
};

/** The most a failure counts as in least-latency's average (the health histogram's last bound). */
const FAILURE_SAMPLE_MAX_MS = 30_000;

export class Router {
  private readonly holds: SharedHolds;
  private readonly stats: UpstreamStats;
  private readonly breakers: CircuitBreakers;
  private readonly cooldowns: KeyCooldowns;
  private readonly limits: KeyLimitCounters;
  private readonly turns = new Map<string, number>();

  constructor(
    private readonly cfg: RoutingConfig,
    counters: CounterStore,
    store: RoutingStateStore,
    private readonly clock: Clock,
    private readonly metrics: Metrics,
    log: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void },
    private readonly random: () => number = Math.random,
  ) {
    this.holds = new SharedHolds(store, clock, cfg.sync_ms, log);
    this.stats = new UpstreamStats(cfg, clock);
    this.breakers = new CircuitBreakers(cfg.circuit_breaker, this.holds, this.stats, clock, metrics, log);
    this.cooldowns = new KeyCooldowns(cfg.key_cooldown, this.holds, clock, metrics, log);
    this.limits = new KeyLimitCounters(counters, this.holds.warn);
  }

  close(): void {
    this.holds.close();
  }

  /** Reads the holds every instance shared (every `routing.sync_ms` on its own). */
  sync(): Promise<void> {
    return this.holds.sync();
  }

  /**
   * The request's candidates in the order to try them: the model's upstreams in its strategy's
   * order, each with its provider's keys (by affinity, else taking turns).
   */
  plan<T extends Target>(model: ModelConfig, targets: readonly T[], hint: RouteHint = {}): Routed<T>[] {
    if (targets.length === 1) {
      const t = targets[0]!;
      const keys = keysOf(t.provider);
      if (keys.length === 1) return [this.routed(t, keys[0]!)];
    }
    const choosesUpstream = model.strategy !== 'failover' && targets.length > 1;
    // Only asked for where it can change the choice: hashing a long prompt is not free.
    const affinity = model.cache_affinity && (choosesUpstream || targets.some((t) => keysOf(t.provider).length > 1)) ? (hint.affinity?.() ?? null) : null;
    const ids = targets.map((t) => upstreamId(t));
    let order: number[];
    if (!choosesUpstream) order = targets.map((_, i) => i);
    else {
      const views: UpstreamView[] = targets.map((t, i) => {
        const s = this.stats.peek(ids[i]!);
        return { weight: t.weight, ewmaMs: s?.ewmaMs ?? null, inFlight: s?.inFlight ?? 0 };
      });
      order = orderUpstreams(model.strategy, views, { exploration: this.cfg.least_latency.exploration, turn: this.turn(model.id), random: this.random });
      if (affinity) {
        // The conversation's upstream among those the strategy finds good enough now; the rest after, in the strategy's order.
        const eligible = affinityEligible(model.strategy, views);
        const weight = (i: number) => (!eligible[i] ? 0 : model.strategy === 'weighted' ? views[i]!.weight : 1);
        const hashed = rendezvousOrder(affinity, ids, views.map((_, i) => weight(i))).filter((i) => weight(i) > 0);
        order = [...hashed, ...order.filter((i) => !hashed.includes(i))];
      }
    }
    const out: Routed<T>[] = [];
    for (const i of order) {
      const t = targets[i]!;
      const keys = keysOf(t.provider);
      if (keys.length === 1) {
        out.push(this.routed(t, keys[0]!));
        continue;
      }
      const keyOrder = affinity ? rendezvousOrder(affinity, keys.map((k) => k.label), keys.map(() => 1)) : rotation(keys.length, this.turn(ids[i]!));
      for (const k of keyOrder) out.push(this.routed(t, keys[k]!));
    }
    return out;
  }

  private routed<T extends Target>(t: T, key: PoolKey): Routed<T> {
    return { ...t, provider: key.provider, key, upstreamId: upstreamId(t) };
  }

  private turn(of: string): number {
    const n = this.turns.get(of) ?? 0;
    this.turns.set(of, n + 1);
    return n;
  }

  /**
   * Whether the candidate may be tried now: its upstream's breaker closed (or this is the one
   * probe of a half-open one), its key not cooling down, and the key's limits room for it.
   * The cheap local checks come first; the probe is claimed only for a key that may be used.
   */
  async acquire(routed: Routed, requestId: string, attempt: number, tokens = 0): Promise<Lease | Skip> {
    const now = this.clock.now();
    const up = routed.upstreamId;
    const breaker = this.breakers.held(up);
    if (breaker) {
      const refused = this.breakers.refusal(up, breaker, now);
      if (refused) return { ...this.skipped(routed, refused.reason, refused.text, refused.retryAt), upstream: true };
    }
    if (routed.key.pooled) {
      const cooling = this.cooldowns.active(routed, now);
      if (cooling) return this.skipped(routed, 'cooling_down', `key cooling down after ${cooling.reason}`, cooling.until);
    }
    const probe = breaker !== undefined;
    if (probe) {
      const refused = await this.breakers.claimProbe(up, now);
      if (refused) return { ...this.skipped(routed, refused.reason, refused.text, refused.retryAt), upstream: true };
    }
    const limits = routed.key.limits;
    // Unique across instances (a client may send its own X-Request-Id twice).
    const holdId = limits ? `${requestId}:${attempt}:${randomUUID()}` : '';
    let counted = tokens;
    if (limits) {
      counted = limits.tokensPerMinute ? Math.max(1, Math.min(tokens, limits.tokensPerMinute)) : tokens;
      const full = await this.limits.admit(routed, holdId, counted, now);
      if (full) {
        if (probe) this.breakers.releaseProbe(up);
        return this.skipped(routed, 'key_limit', `key at its ${full.what}`, full.retryAt);
      }
    }
    this.stats.of(up).inFlight++;
    if (routed.key.pooled) this.stats.of(routed.key.target).inFlight++;
    return { routed, probe, holdId, tokens: counted, ended: false };
  }

  private skipped(routed: Routed, reason: string, text: string, retryAt: number): Skip {
    this.metrics.routingSkips.inc({ provider: routed.provider.id, key: routed.key.label, reason });
    return { skip: text, retryAt, retryInMs: retryAt - this.clock.now() };
  }

  /** The attempt answered (a stream: its first event) after `ms`. */
  succeeded(lease: Lease, ms: number): void {
    const { routed } = lease;
    const s = this.stats.window(routed.upstreamId);
    s.requests++;
    this.stats.sample(s, ms);
    this.breakers.answered(routed.upstreamId, lease.probe);
    if (routed.key.pooled) {
      this.metrics.upstreamKeyAttempts.inc({ provider: routed.provider.id, key: routed.key.label, outcome: 'ok' });
      this.cooldowns.answered(routed);
    }
  }

  /**
   * The attempt failed with the upstream's error (never the gateway's own) after `ms`. `streak`:
   * whether it may add to the upstream's failure streak (once per request and upstream, so one
   * request that makes an upstream fail cannot open its breaker alone).
   */
  failed(lease: Lease, e: UpstreamError, ms = 0, streak = true): void {
    const { routed } = lease;
    if (routed.key.pooled) this.metrics.upstreamKeyAttempts.inc({ provider: routed.provider.id, key: routed.key.label, outcome: 'error' });
    if (!upstreamAtFault(e)) {
      // The upstream answered: a key's refusal (429, 401, 402, 403: a key of a pool rests, the next
      // one is used at once; a single key has no next one) or the request's (400, 404, 413). It is up.
      if (routed.key.pooled && coolsDown(e.status)) this.cooldowns.start(routed, e);
      if (lease.probe) this.breakers.answered(routed.upstreamId, true);
      return;
    }
    // Least-latency reads a failure as a slow answer: an upstream that fails is not the fastest.
    // Bounded, so an upstream that failed for long is measured back down by a few dozen answers.
    const s = this.stats.of(routed.upstreamId);
    this.stats.sample(s, Math.max(ms, Math.min(2 * (s.ewmaMs ?? 0), FAILURE_SAMPLE_MAX_MS), 1000));
    this.breakers.failed(routed, healthReason(e), lease.probe, streak, false);
  }

  /** An answer counted as a success (a stream) failed afterwards: an error, not another attempt. */
  failedLate(routed: Routed, e: UpstreamError): void {
    if (upstreamAtFault(e)) this.breakers.failed(routed, healthReason(e), false, true, true);
  }

  /** Ends the attempt: its concurrency slot freed, its tokens per minute corrected to what it used. */
  end(lease: Lease, usedTokens?: number): void {
    if (lease.ended) return;
    lease.ended = true;
    const { routed } = lease;
    this.breakers.ended(routed.upstreamId, lease.probe);
    this.stats.of(routed.upstreamId).inFlight--;
    if (routed.key.pooled) this.stats.of(routed.key.target).inFlight--;
    if (routed.key.limits) this.limits.end(routed, lease.holdId, lease.tokens, usedTokens, this.clock.now());
  }

  /** An upstream's state for the health views. */
  upstreamView(provider: string, upstreamModel: string): TargetView {
    return this.view(upstreamId({ provider: { id: provider }, upstreamModel }), true);
  }

  /** A key's state for the health views: its own cool-down, else the one for this upstream model. */
  keyView(label: string, upstreamModel?: string): TargetView {
    const own = this.view(`key:${label}`, false);
    return own.state === 'closed' && upstreamModel !== undefined ? this.view(`key:${label}/${upstreamModel}`, false, `key:${label}`) : own;
  }

  private view(target: string, breaker: boolean, statsOf = target): TargetView {
    const now = this.clock.now();
    const h = this.holds.get(target);
    const s = this.stats.peek(statsOf);
    const base = { in_flight: Math.max(0, s?.inFlight ?? 0), latency_ms_ewma: s?.ewmaMs === null || s?.ewmaMs === undefined ? null : Math.round(s.ewmaMs) };
    if (!h || (!breaker && h.until <= now)) return { state: 'closed', until: null, reason: null, ...base };
    const state = breaker ? (h.until > now ? 'open' : 'half_open') : 'cooling_down';
    return { state, until: new Date(h.until).toISOString(), reason: h.reason, ...base };
  }
}

/**
 * Whether a failure is the upstream's own (counted by its breaker, and a reason to leave it for
 * the next upstream): unreachable, timed out, 408, 5xx. A 4xx is an answer: the key's (429, 401,
 * 402, 403) or the request's (400, 404, 413).
 */
export const upstreamAtFault = (e: UpstreamError) => e.status === 0 || e.status === 408 || e.status >= 500;
const healthReason = (e: UpstreamError) => (e.status ? `http_${e.status}` : e.code);

/** The breaker's target: one upstream of a model (a provider and its model there). */
/** `#` never appears in a provider id: the model part after it may hold anything. */
export const upstreamId = (t: { provider: { id: string }; upstreamModel: string }) => `up:${t.provider.id}#${t.upstreamModel}`;

/** 0..n-1 starting at `turn` (mod n): each request starts one key further. */
function rotation(n: number, turn: number): number[] {
  const start = turn % n;
  return Array.from({ length: n }, (_, i) => (start + i) % n);
}
