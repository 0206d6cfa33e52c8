// Which upstream and key a request goes to, and whether each may be tried now (docs/routing.md):
// the model's strategy orders its upstreams, cache affinity keeps a prompt prefix on one key, key
// pools stay under each key's limits (counted across instances in the counter store), keys that
// got 429/401/403 cool down, and an upstream that keeps failing has its circuit breaker opened
// for every instance (routing-state store), then probed with one request.
import { randomUUID } from 'node:crypto';
import type { ModelConfig, RoutingConfig } from '../config/schema.ts';
import type { Clock } from '../runtime/clock.ts';
import type { Metrics } from '../runtime/metrics.ts';
import type { CounterStore, HoldSpec } from '../stores/index.ts';
import type { RouteHold, RoutingStateStore } from '../stores/routing-state.ts';
import type { UpstreamError } from '../upstream/errors.ts';
import { keysOf, type PoolKey } from './key-pool.ts';
import { affinityEligible, orderUpstreams, rendezvousOrder, type UpstreamView } from './strategies.ts';
import type { Target } from './targets.ts';

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

type Stats = { inFlight: number; ewmaMs: number | null; windowStart: number; requests: number; errors: number };

const MINUTE = 60_000;
/** Longest a concurrency slot is held by a request whose gateway died before releasing it. */
const slotTtl = (timeoutMs: number) => timeoutMs + MINUTE;
/** A half-open breaker's probe claim lapses after this, so a probe lost with its instance does not block the upstream. */
const PROBE_TTL_MS = 30_000;
/** The most a failure counts as in least-latency's average (the health histogram's last bound). */
const FAILURE_SAMPLE_MAX_MS = 30_000;

export class Router {
  private holds = new Map<string, RouteHold>();
  /** When this instance ended a target's hold: a snapshot read before then does not bring it back. */
  private readonly ended = new Map<string, number>();
  private readonly stats = new Map<string, Stats>();
  /** Upstreams whose shared failure streak this instance added to, with its own count (used when the store is away). */
  private readonly streaks = new Map<string, number>();
  /** Half-open upstreams whose probe this instance sends. */
  private readonly probing = new Set<string>();
  /** Half-open upstreams whose probe another instance holds: not asked again before this time. */
  private readonly probedElsewhere = new Map<string, number>();
  private readonly turns = new Map<string, number>();
  private readonly timer: NodeJS.Timeout | null;
  private syncing = false;
  private storeFailed = false;

  constructor(
    private readonly cfg: RoutingConfig,
    private readonly counters: CounterStore,
    private readonly store: RoutingStateStore,
    private readonly clock: Clock,
    private readonly metrics: Metrics,
    private readonly log: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void },
    private readonly random: () => number = Math.random,
  ) {
    this.timer = store.shared ? setInterval(() => void this.sync(), cfg.sync_ms) : null;
    this.timer?.unref();
    if (store.shared) void this.sync();
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /**
   * Reads the holds every instance shared. Those this instance wrote meanwhile are kept; those it
   * ended after they began are not brought back by a snapshot read before it ended them.
   */
  async sync(): Promise<void> {
    if (this.syncing) return;
    this.syncing = true;
    const started = this.clock.now();
    try {
      const shared = await this.store.snapshot();
      const next = new Map<string, RouteHold>();
      for (const h of shared) if ((this.ended.get(h.target) ?? -Infinity) < h.since) next.set(h.target, h);
      for (const [target, h] of this.holds) if (h.since >= started && !next.has(target)) next.set(target, h);
      this.holds = next;
      for (const [target, at] of this.ended) if (at < started - 60_000) this.ended.delete(target);
      this.storeFailed = false;
    } catch (err) {
      this.storeWarn(err);
    } finally {
      this.syncing = false;
    }
  }

  private storeWarn(err: unknown): void {
    if (this.storeFailed) return;
    this.storeFailed = true;
    this.log.warn({ err: (err as Error).message }, 'routing: the shared breaker and cool-down states could not be read or written; this instance goes on with its own');
  }

  private stat(target: string): Stats {
    let s = this.stats.get(target);
    if (!s) this.stats.set(target, (s = { inFlight: 0, ewmaMs: null, windowStart: this.clock.now(), requests: 0, errors: 0 }));
    return s;
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
        const s = this.stats.get(ids[i]!);
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
    const breaker = this.cfg.circuit_breaker.enabled ? this.holds.get(up) : undefined;
    if (breaker) {
      if (now < breaker.until) return { ...this.skipped(routed, 'circuit_open', `circuit open after ${breaker.reason}`, breaker.until), upstream: true };
      if (this.probing.has(up) || (this.probedElsewhere.get(up) ?? 0) > now) return { ...this.skipped(routed, 'circuit_half_open', 'circuit half-open, its probe under way', now + 1000), upstream: true };
    }
    if (routed.key.pooled) {
      const cooling = this.coolingDown(routed, now);
      if (cooling) return this.skipped(routed, 'cooling_down', `key cooling down after ${cooling.reason}`, cooling.until);
    }
    let probe = false;
    if (breaker) {
      const claimed = await this.store.claimProbe(up, PROBE_TTL_MS).catch((err) => (this.storeWarn(err), true));
      if (!claimed) {
        this.probedElsewhere.set(up, now + 1000);
        return { ...this.skipped(routed, 'circuit_half_open', 'circuit half-open, its probe under way', now + 1000), upstream: true };
      }
      this.probing.add(up);
      probe = true;
    }
    const limits = routed.key.limits;
    // Unique across instances (a client may send its own X-Request-Id twice).
    const holdId = limits ? `${requestId}:${attempt}:${randomUUID()}` : '';
    let counted = tokens;
    if (limits) {
      counted = limits.tokensPerMinute ? Math.max(1, Math.min(tokens, limits.tokensPerMinute)) : tokens;
      const refused = await this.admit(routed, holdId, counted, now);
      if (refused) {
        if (probe) this.releaseProbe(up);
        return refused;
      }
    }
    this.stat(up).inFlight++;
    if (routed.key.pooled) this.stat(routed.key.target).inFlight++;
    return { routed, probe, holdId, tokens: counted, ended: false };
  }

  /** The key's cool-down in force: its own (401), or its own for this upstream model (429, 403). */
  private coolingDown(routed: Routed, now: number): RouteHold | null {
    for (const target of [routed.key.target, keyModelTarget(routed)]) {
      const h = this.holds.get(target);
      if (h && now < h.until) return h;
    }
    return null;
  }

  /** The key's limits in one admission (all or nothing); null when there was room. */
  private async admit(routed: Routed, id: string, tokens: number, now: number): Promise<Skip | null> {
    const l = routed.key.limits!;
    const tag = `{rk:${routed.key.label}}`;
    const specs: (HoldSpec & { what: string; retryAt: number })[] = [];
    const window = { ttlMs: MINUTE, keepUntil: now + MINUTE };
    if (l.requestsPerMinute) specs.push({ key: `${tag}:rpm`, id, amount: 1, limit: l.requestsPerMinute, ...window, what: `requests_per_minute (${l.requestsPerMinute})`, retryAt: now + MINUTE });
    if (l.tokensPerMinute) specs.push({ key: `${tag}:tpm`, id, amount: tokens, limit: l.tokensPerMinute, ...window, what: `tokens_per_minute (${l.tokensPerMinute})`, retryAt: now + MINUTE });
    if (l.maxConcurrency) {
      const ttlMs = slotTtl(routed.provider.timeout_ms);
      specs.push({ key: `${tag}:conc`, id, amount: 1, limit: l.maxConcurrency, ttlMs, keepUntil: now + ttlMs, what: `max_concurrency (${l.maxConcurrency})`, retryAt: now + 1000 });
    }
    try {
      const r = await this.counters.admit([], specs, now);
      const full = r.quotas?.findIndex((q) => !q.allowed) ?? -1;
      if (full < 0) return null;
      return this.skipped(routed, 'key_limit', `key at its ${specs[full]!.what}`, specs[full]!.retryAt);
    } catch (err) {
      // The counters are away: the request's own admission already waited on them; the key is tried unmetered.
      this.storeWarn(err);
      return null;
    }
  }

  private skipped(routed: Routed, reason: string, text: string, retryAt: number): Skip {
    this.metrics.routingSkips.inc({ provider: routed.provider.id, key: routed.key.label, reason });
    return { skip: text, retryAt, retryInMs: retryAt - this.clock.now() };
  }

  /** The attempt answered (a stream: its first event) after `ms`. */
  succeeded(lease: Lease, ms: number): void {
    const { routed } = lease;
    const up = routed.upstreamId;
    const s = this.window(up);
    s.requests++;
    this.sample(s, ms);
    if (lease.probe) this.closeBreaker(up, true);
    else if (this.streaks.has(up) && this.holds.get(up)?.kind !== 'breaker') {
      // A success ends the failure streak. It never closes an open breaker: only the probe does
      // (any other success was sent before the breaker opened and says nothing about now).
      this.streaks.delete(up);
      this.store.resetStreak(up).catch((err) => this.storeWarn(err));
    }
    if (routed.key.pooled) {
      this.metrics.upstreamKeyAttempts.inc({ provider: routed.provider.id, key: routed.key.label, outcome: 'ok' });
      // A key that answers is out of its cool-downs (the next 429 starts the backoff afresh).
      for (const target of [routed.key.target, keyModelTarget(routed)]) if (this.holds.has(target)) this.clearHold(target);
    }
  }

  /**
   * The attempt failed with the upstream's error (never the gateway's own) after `ms`. `streak`:
   * whether it may add to the upstream's failure streak (once per request and upstream, so one
   * request that makes an upstream fail cannot open its breaker alone).
   */
  failed(lease: Lease, e: UpstreamError, ms = 0, streak = true): void {
    const { routed } = lease;
    const up = routed.upstreamId;
    if (routed.key.pooled) this.metrics.upstreamKeyAttempts.inc({ provider: routed.provider.id, key: routed.key.label, outcome: 'error' });
    if (!upstreamAtFault(e)) {
      // The upstream answered: a key's refusal (429, 401, 402, 403: a key of a pool rests, the next
      // one is used at once; a single key has no next one) or the request's (400, 404, 413). It is up.
      if (routed.key.pooled && (e.status === 429 || e.status === 401 || e.status === 402 || e.status === 403)) this.coolDown(routed, e);
      if (lease.probe) this.closeBreaker(up, true);
      return;
    }
    // Least-latency reads a failure as a slow answer: an upstream that fails is not the fastest.
    // Bounded, so an upstream that failed for long is measured back down by a few dozen answers.
    const s = this.stat(up);
    this.sample(s, Math.max(ms, Math.min(2 * (s.ewmaMs ?? 0), FAILURE_SAMPLE_MAX_MS), 1000));
    this.upstreamFailed(routed, healthReason(e), lease.probe, streak, false);
  }

  /** An answer counted as a success (a stream) failed afterwards: an error, not another attempt. */
  failedLate(routed: Routed, e: UpstreamError): void {
    if (upstreamAtFault(e)) this.upstreamFailed(routed, healthReason(e), false, true, true);
  }

  /** Ends the attempt: its concurrency slot freed, its tokens per minute corrected to what it used. */
  end(lease: Lease, usedTokens?: number): void {
    if (lease.ended) return;
    lease.ended = true;
    const { routed } = lease;
    // A probe that ended with neither outcome recorded (the gateway's own failure): the next request may probe.
    if (lease.probe && this.probing.has(routed.upstreamId)) this.releaseProbe(routed.upstreamId);
    this.stat(routed.upstreamId).inFlight--;
    if (routed.key.pooled) this.stat(routed.key.target).inFlight--;
    const l = routed.key.limits;
    if (!l) return;
    const now = this.clock.now();
    const tag = `{rk:${routed.key.label}}`;
    if (l.maxConcurrency) this.counters.settle(`${tag}:conc`, lease.holdId, 0, { keepUntil: now, now }).catch((err) => this.storeWarn(err));
    if (l.tokensPerMinute && usedTokens !== undefined && usedTokens !== lease.tokens) {
      // The estimate's hold becomes what was used (counted for a minute from now: never less than the provider counts).
      this.counters.reserve(`${tag}:tpm`, lease.holdId, usedTokens, Number.MAX_SAFE_INTEGER, { ttlMs: MINUTE, keepUntil: now + MINUTE, now }).catch((err) => this.storeWarn(err));
    }
  }

  private sample(s: Stats, ms: number): void {
    const alpha = this.cfg.least_latency.smoothing;
    s.ewmaMs = s.ewmaMs === null ? ms : s.ewmaMs + alpha * (ms - s.ewmaMs);
  }

  private releaseProbe(up: string): void {
    this.probing.delete(up);
    this.store.releaseProbe(up).catch((err) => this.storeWarn(err));
  }

  /** The upstream's error-rate window, rolled over when it has run out. */
  private window(up: string): Stats {
    const s = this.stat(up);
    const now = this.clock.now();
    if (now - s.windowStart >= this.cfg.circuit_breaker.window_seconds * 1000) this.resetWindow(s, now);
    return s;
  }

  private resetWindow(s: Stats, now: number): void {
    s.windowStart = now;
    s.requests = 0;
    s.errors = 0;
  }

  private upstreamFailed(routed: Routed, reason: string, probe: boolean, streak: boolean, late: boolean): void {
    const cb = this.cfg.circuit_breaker;
    const up = routed.upstreamId;
    const s = this.window(up);
    if (!late) s.requests++;
    s.errors++;
    if (!cb.enabled) return;
    if (probe) {
      // The probe failed: open again, for twice as long (up to the maximum).
      this.probing.delete(up);
      const before = this.holds.get(up)?.backoffMs ?? cb.cooldown_seconds * 1000;
      this.openBreaker(routed, reason, Math.min(before * 2, cb.max_cooldown_seconds * 1000));
      return;
    }
    if (this.holds.get(up)?.kind === 'breaker') return; // already open (another attempt of the same moment)
    if (s.requests >= cb.min_requests && s.errors / s.requests >= cb.error_rate) {
      this.openBreaker(routed, `${reason}; error rate ${Math.round((100 * s.errors) / s.requests)}%`, cb.cooldown_seconds * 1000);
      return;
    }
    if (!streak) return;
    // The streak is counted in the store (every instance's failures add up); this instance's own
    // count stands in while the store is away.
    const own = (this.streaks.get(up) ?? 0) + 1;
    this.streaks.set(up, own);
    const check = (n: number) => {
      if (n >= cb.consecutive_failures && this.holds.get(up)?.kind !== 'breaker') this.openBreaker(routed, `${reason}; ${n} failures in a row`, cb.cooldown_seconds * 1000);
    };
    this.store.failure(up, cb.window_seconds * 1000).then(check, (err) => {
      this.storeWarn(err);
      check(own);
    });
  }

  private openBreaker(routed: Routed, reason: string, backoffMs: number): void {
    const now = this.clock.now();
    const hold: RouteHold = { target: routed.upstreamId, kind: 'breaker', until: now + backoffMs, since: now, reason, backoffMs };
    this.holds.set(hold.target, hold);
    this.streaks.delete(hold.target);
    // The error rate starts afresh: the failures that opened it do not reopen it after the probe.
    this.resetWindow(this.stat(hold.target), now);
    this.store.put(hold).catch((err) => this.storeWarn(err));
    this.metrics.breakerOpenings.inc({ provider: routed.provider.id, upstream_model: routed.upstreamModel });
    this.log.warn({ provider: routed.provider.id, upstream_model: routed.upstreamModel, reason, cooldown_ms: backoffMs }, 'circuit breaker opened: the upstream is skipped until its cool-down ends, then probed');
  }

  /** The probe succeeded (or the upstream answered it): closed for every instance. */
  private closeBreaker(up: string, wasProbe: boolean): void {
    this.probing.delete(up);
    this.probedElsewhere.delete(up);
    this.streaks.delete(up);
    const open = this.holds.get(up);
    if (open) this.resetWindow(this.stat(up), this.clock.now());
    this.clearHold(up);
    if (open && wasProbe) this.log.info({ upstream: up }, 'circuit breaker closed: the probe succeeded');
  }

  private clearHold(target: string): void {
    this.holds.delete(target);
    this.ended.set(target, this.clock.now());
    this.store.clear(target).catch((err) => this.storeWarn(err));
  }

  private coolDown(routed: Routed, e: UpstreamError): void {
    const kc = this.cfg.key_cooldown;
    const reason = `http_${e.status}`;
    // A 401 (who the key is) and a 402 (its account's credits) are the key's whatever the model; 429
    // and 403 may be the key's for this model only (providers limit and grant per model).
    const target = e.status === 401 || e.status === 402 ? routed.key.target : keyModelTarget(routed);
    const before = this.holds.get(target);
    const base = (e.status === 429 ? kc.rate_limited_seconds : kc.auth_failed_seconds) * 1000;
    const asked = e.retryAfter !== undefined && e.retryAfter > 0 ? e.retryAfter * 1000 : undefined;
    const backoffMs = Math.min(asked ?? (before?.reason === reason ? Math.max(base, before.backoffMs * 2) : base), kc.max_seconds * 1000);
    const now = this.clock.now();
    const hold: RouteHold = { target, kind: 'cooldown', until: now + backoffMs, since: now, reason, backoffMs };
    this.holds.set(target, hold);
    this.store.put(hold).catch((err) => this.storeWarn(err));
    this.metrics.keyCooldowns.inc({ provider: routed.provider.id, key: routed.key.label, reason });
    this.log.warn({ provider: routed.provider.id, key: routed.key.label, reason, cooldown_ms: backoffMs }, 'upstream key cooling down: the next key is used meanwhile');
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
    const s = this.stats.get(statsOf);
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
const keyModelTarget = (r: Routed) => `${r.key.target}/${r.upstreamModel}`;

/** 0..n-1 starting at `turn` (mod n): each request starts one key further. */
function rotation(n: number, turn: number): number[] {
  const start = turn % n;
  return Array.from({ length: n }, (_, i) => (start + i) % n);
}
