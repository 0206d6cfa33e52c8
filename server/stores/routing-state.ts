// What the instances of one deployment share about upstreams and keys (server/routing/): open
// circuit breakers, keys cooling down, failure streaks and the one probe of a half-open breaker.
// In Redis when the counters are there, else in this process. None of it is read per request:
// the router keeps a snapshot, refreshed every `routing.sync_ms`, and writes only on a change
// of state (a failure, a breaker opening or closing), so the hot path makes no round trip.
import { RedisCounterStore } from './redis.ts';
import type { CounterStore } from './types.ts';

/**
 * A target set aside: an upstream's open breaker (`breaker`: past `until` it is half-open, one probe
 * goes through) or a key's cool-down (`cooldown`: usable again at `until`). `backoffMs` is the
 * cool-down that was applied, doubled by the next failure of the same kind.
 */
export type RouteHold = { target: string; kind: 'breaker' | 'cooldown'; until: number; since: number; reason: string; backoffMs: number };

export interface RoutingStateStore {
  readonly shared: boolean;
  /** Every hold recorded. */
  snapshot(): Promise<RouteHold[]>;
  put(hold: RouteHold): Promise<void>;
  /** Ends the target's hold and its failure streak (a success). */
  clear(target: string): Promise<void>;
  /** Ends the target's failure streak only (a success; an open breaker stays open). */
  resetStreak(target: string): Promise<void>;
  /** Gives back a probe claim that was not used. */
  releaseProbe(target: string): Promise<void>;
  /** Adds one to the target's failure streak, which lapses `windowMs` after its last failure; returns its length. */
  failure(target: string, windowMs: number): Promise<number>;
  /** The probe of a half-open breaker: true for one caller across instances until `ttlMs` passes or the hold changes. */
  claimProbe(target: string, ttlMs: number): Promise<boolean>;
}

export class MemoryRoutingStateStore implements RoutingStateStore {
  readonly shared = false;
  private readonly holds = new Map<string, RouteHold>();
  private readonly streaks = new Map<string, { n: number; until: number }>();
  private readonly probes = new Map<string, number>();

  async snapshot() {
    return [...this.holds.values()];
  }
  async put(hold: RouteHold) {
    this.holds.set(hold.target, hold);
    this.probes.delete(hold.target);
  }
  async clear(target: string) {
    this.holds.delete(target);
    this.streaks.delete(target);
    this.probes.delete(target);
  }
  async resetStreak(target: string) {
    this.streaks.delete(target);
  }
  async releaseProbe(target: string) {
    this.probes.delete(target);
  }
  async failure(target: string, windowMs: number) {
    const now = Date.now();
    const s = this.streaks.get(target);
    const n = s && s.until > now ? s.n + 1 : 1;
    this.streaks.set(target, { n, until: now + windowMs });
    return n;
  }
  async claimProbe(target: string, ttlMs: number) {
    const now = Date.now();
    if ((this.probes.get(target) ?? 0) > now) return false;
    this.probes.set(target, now + ttlMs);
    return true;
  }
}

/** Holds in one hash (field: target, value: JSON), streaks and probe claims in keys of their own. */
export class RedisRoutingStateStore implements RoutingStateStore {
  readonly shared = true;
  constructor(private readonly store: RedisCounterStore) {}

  private get holdsKey() {
    return `${this.store.prefix}routing:holds`;
  }
  private key(kind: 'streak' | 'probe', target: string) {
    return `${this.store.prefix}routing:${kind}:${target}`;
  }

  async snapshot() {
    const all = await this.store.run(() => this.store.redis.hgetall(this.holdsKey));
    return Object.values(all).flatMap((v) => {
      try {
        return [JSON.parse(v) as RouteHold];
      } catch {
        return [];
      }
    });
  }
  async put(hold: RouteHold) {
    await this.store.run(() => Promise.all([this.store.redis.hset(this.holdsKey, hold.target, JSON.stringify(hold)), this.store.redis.del(this.key('probe', hold.target))]));
  }
  async clear(target: string) {
    await this.store.run(() => Promise.all([this.store.redis.hdel(this.holdsKey, target), this.store.redis.del(this.key('streak', target), this.key('probe', target))]));
  }
  async resetStreak(target: string) {
    await this.store.run(() => this.store.redis.del(this.key('streak', target)));
  }
  async releaseProbe(target: string) {
    await this.store.run(() => this.store.redis.del(this.key('probe', target)));
  }
  async failure(target: string, windowMs: number) {
    const key = this.key('streak', target);
    const [n] = await this.store.run(() => Promise.all([this.store.redis.incr(key), this.store.redis.pexpire(key, windowMs)]));
    return n;
  }
  async claimProbe(target: string, ttlMs: number) {
    return (await this.store.run(() => this.store.redis.set(this.key('probe', target), '1', 'PX', ttlMs, 'NX'))) === 'OK';
  }
}

/** Beside the counters: in Redis when they are, so every instance sees the same states. */
export function openRoutingStateStore(counters: CounterStore): RoutingStateStore {
  return counters instanceof RedisCounterStore ? new RedisRoutingStateStore(counters) : new MemoryRoutingStateStore();
}
