// A pooled key's rest after the upstream refused it (docs/routing.md "Key pools"): 429, 401, 402
// or 403 cool the key down (for every instance, through the shared holds), with the provider's
// Retry-After or a backoff that doubles while the same refusal repeats; the next key is used
// meanwhile, and a key that answers is out of its cool-downs.
import type { RoutingConfig } from '../config/schema.ts';
import type { Clock } from '../runtime/clock.ts';
import type { Metrics } from '../runtime/metrics.ts';
import type { RouteHold } from '../stores/routing-state.ts';
import type { UpstreamError } from '../upstream/errors.ts';
import type { PoolKey } from './key-pool.ts';
import type { SharedHolds } from './shared-holds.ts';

type KeyAttempt = { key: PoolKey; provider: { id: string }; upstreamModel: string };

/** A key's cool-down for one upstream model (429 and 403 may be per model: providers limit and grant per model). */
export const keyModelTarget = (r: KeyAttempt) => `${r.key.target}/${r.upstreamModel}`;

/** The refusals that rest a key of a pool. */
export const coolsDown = (status: number) => status === 429 || status === 401 || status === 402 || status === 403;

export class KeyCooldowns {
  constructor(
    private readonly cfg: RoutingConfig['key_cooldown'],
    private readonly holds: SharedHolds,
    private readonly clock: Clock,
    private readonly metrics: Metrics,
    private readonly log: { warn(obj: object, msg: string): void },
  ) {}

  /** The key's cool-down in force: its own (401, 402), or its own for this upstream model (429, 403). */
  active(routed: KeyAttempt, now: number): RouteHold | null {
    for (const target of [routed.key.target, keyModelTarget(routed)]) {
      const h = this.holds.get(target);
      if (h && now < h.until) return h;
    }
    return null;
  }

  /** The key answered: out of its cool-downs (the next 429 starts the backoff afresh). */
  answered(routed: KeyAttempt): void {
    for (const target of [routed.key.target, keyModelTarget(routed)]) if (this.holds.has(target)) this.holds.clear(target);
  }

  /** The upstream refused the key (`coolsDown(e.status)`): it rests. */
  start(routed: KeyAttempt, e: UpstreamError): void {
    const kc = this.cfg;
    const reason = `http_${e.status}`;
    // A 401 (who the key is) and a 402 (its account's credits) are the key's whatever the model; 429
    // and 403 may be the key's for this model only (providers limit and grant per model).
    const target = e.status === 401 || e.status === 402 ? routed.key.target : keyModelTarget(routed);
    const before = this.holds.get(target);
    const base = (e.status === 429 ? kc.rate_limited_seconds : kc.auth_failed_seconds) * 1000;
    const asked = e.retryAfter !== undefined && e.retryAfter > 0 ? e.retryAfter * 1000 : undefined;
    const backoffMs = Math.min(asked ?? (before?.reason === reason ? Math.max(base, before.backoffMs * 2) : base), kc.max_seconds * 1000);
    const now = this.clock.now();
    this.holds.put({ target, kind: 'cooldown', until: now + backoffMs, since: now, reason, backoffMs });
    this.metrics.keyCooldowns.inc({ provider: routed.provider.id, key: routed.key.label, reason });
    this.log.warn({ provider: routed.provider.id, key: routed.key.label, reason, cooldown_ms: backoffMs }, 'upstream key cooling down: the next key is used meanwhile');
  }
}
