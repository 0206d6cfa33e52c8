// The order a model's upstreams are tried in, per strategy (docs/routing.md "Strategies"). The
// first is the choice; the rest are the failover order when it fails before any output.
import type { RoutingStrategy } from '../config/schema.ts';

/** What a strategy reads of one upstream: its weight and what this instance measured of it. */
export type UpstreamView = { weight: number; ewmaMs: number | null; inFlight: number };

export type StrategyOptions = {
  /** Share of least-latency choices given to another upstream than the fastest. */
  exploration: number;
  /** A rotating offset: ties (least-busy) take turns instead of always falling to the first. */
  turn: number;
  random?: () => number;
};

/** Indexes of `views` in the order to try them. */
export function orderUpstreams(strategy: RoutingStrategy, views: readonly UpstreamView[], opts: StrategyOptions): number[] {
  const idx = views.map((_, i) => i);
  if (views.length < 2) return idx;
  const random = opts.random ?? Math.random;
  switch (strategy) {
    case 'failover':
      return idx;
    case 'weighted':
      return weightedOrder(views.map((v) => v.weight), random);
    case 'least-latency': {
      // Unmeasured upstreams first (so each is measured), then the fastest moving average.
      const order = idx.sort((a, b) => (views[a]!.ewmaMs ?? -1) - (views[b]!.ewmaMs ?? -1) || a - b);
      if (random() < opts.exploration) {
        // Exploration: another upstream goes first now and then, so one that recovered (or slowed) is measured again.
        const j = 1 + Math.floor(random() * (order.length - 1));
        [order[0], order[j]] = [order[j]!, order[0]!];
      }
      return order;
    }
    case 'least-busy': {
      const n = views.length;
      const rank = (i: number) => (i - (opts.turn % n) + n) % n;
      return idx.sort((a, b) => views[a]!.inFlight - views[b]!.inFlight || rank(a) - rank(b));
    }
  }
}

/**
 * Which upstreams a request with cache affinity may stick to: under `weighted`, all; under
 * `least-latency`, those within twice the fastest moving average (and the unmeasured); under
 * `least-busy`, those within twice the fewest requests in flight, plus two. So affinity keeps a
 * conversation's cache warm without pinning it to an upstream the strategy would avoid.
 */
export function affinityEligible(strategy: RoutingStrategy, views: readonly UpstreamView[]): boolean[] {
  if (strategy === 'least-latency') {
    const measured = views.flatMap((v) => (v.ewmaMs === null ? [] : [v.ewmaMs]));
    const best = measured.length ? Math.min(...measured) : 0;
    return views.map((v) => v.ewmaMs === null || v.ewmaMs <= 2 * best);
  }
  if (strategy === 'least-busy') {
    const fewest = Math.min(...views.map((v) => v.inFlight));
    return views.map((v) => v.inFlight <= 2 * fewest + 2);
  }
  return views.map(() => true);
}

/**
 * A weighted random order without replacement (Efraimidis–Spirakis: each draws u^(1/w), highest
 * first), so each upstream is first in proportion to its weight; weight 0 only after the others.
 */
export function weightedOrder(weights: readonly number[], random: () => number): number[] {
  const keys = weights.map((w) => (w > 0 ? Math.pow(random(), 1 / w) : -1));
  return weights.map((_, i) => i).sort((a, b) => keys[b]! - keys[a]! || a - b);
}

/**
 * Rendezvous (highest random weight) hashing: every instance puts the same affinity key on the
 * same target, in proportion to the weights, and when that target is set aside the next
 * highest takes the key, and only that key's requests move.
 */
export function rendezvousOrder(affinity: string, ids: readonly string[], weights: readonly number[]): number[] {
  const scores = ids.map((id, i) => {
    const w = weights[i]!;
    if (w <= 0) return -Infinity;
    const u = (hash32(`${affinity}\u0000${id}`) + 0.5) / 4294967296; // (0, 1)
    return -w / Math.log(u);
  });
  return ids.map((_, i) => i).sort((a, b) => scores[b]! - scores[a]! || a - b);
}

/** FNV-1a with a final avalanche (murmur3's fmix32): well spread over similar strings. */
export function hash32(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
