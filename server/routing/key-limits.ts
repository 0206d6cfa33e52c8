// A pooled key's own limits (requests and tokens per minute, concurrency), counted across
// instances in the counter store: admitted all or nothing before an attempt, its concurrency slot
// freed and its tokens corrected to what was used when the attempt ends.
import type { CounterStore, HoldSpec } from '../stores/index.ts';
import type { PoolKey } from './key-pool.ts';

const MINUTE = 60_000;
/** Longest a concurrency slot is held by a request whose gateway died before releasing it. */
const slotTtl = (timeoutMs: number) => timeoutMs + MINUTE;

/** The key an attempt uses, with its provider's time-out (what bounds a slot's life). */
type Keyed = { key: PoolKey; provider: { timeout_ms: number } };

/** The limit that refused: what it is, and when the key may have room again. */
export type KeyFull = { what: string; retryAt: number };

export class KeyLimitCounters {
  constructor(
    private readonly counters: CounterStore,
    /** The counters are away: said once (the request is not refused for it). */
    private readonly warn: (err: unknown) => void,
  ) {}

  /** The key's limits in one admission (all or nothing) under hold `id`; null when there was room (or the counters are away). */
  async admit(routed: Keyed, id: string, tokens: number, now: number): Promise<KeyFull | null> {
    const l = routed.key.limits!;
    const tag = `{rk:${routed.key.label}}`;
    const specs: (HoldSpec & KeyFull)[] = [];
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
      return full < 0 ? null : specs[full]!;
    } catch (err) {
      // The counters are away: the request's own admission already waited on them; the key is tried unmetered.
      this.warn(err);
      return null;
    }
  }

  /** The attempt under hold `id` ended: its slot freed, its tokens per minute (held as `held`) set to `used`. */
  end(routed: Keyed, id: string, held: number, used: number | undefined, now: number): void {
    const l = routed.key.limits;
    if (!l) return;
    const tag = `{rk:${routed.key.label}}`;
    if (l.maxConcurrency) this.counters.settle(`${tag}:conc`, id, 0, { keepUntil: now, now }).catch(this.warn);
    if (l.tokensPerMinute && used !== undefined && used !== held) {
      // The estimate's hold becomes what was used (counted for a minute from now: never less than the provider counts).
      this.counters.reserve(`${tag}:tpm`, id, used, Number.MAX_SAFE_INTEGER, { ttlMs: MINUTE, keepUntil: now + MINUTE, now }).catch(this.warn);
    }
  }
}
