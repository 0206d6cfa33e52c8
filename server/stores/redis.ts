import { Redis } from 'ioredis';
import type { CounterStore, WindowResult } from './types.ts';

// KEYS[1] counter; ARGV: cost, limit, window ms (0 when an absolute reset is given), absolute reset epoch ms.
// The window's expiry is set by the first counted cost; the check and the add are one script.
const CONSUME = `
local v = tonumber(redis.call('GET', KEYS[1]) or '0')
local ttl = redis.call('PTTL', KEYS[1])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local cost = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local reset
if ttl > 0 then
  reset = now + ttl
elseif tonumber(ARGV[3]) > 0 then
  reset = now + tonumber(ARGV[3])
else
  reset = tonumber(ARGV[4])
end
if v + cost > limit then
  return {0, v, reset}
end
v = redis.call('INCRBY', KEYS[1], cost)
if ttl <= 0 then
  redis.call('PEXPIREAT', KEYS[1], reset)
end
return {1, v, reset}
`;

// Adjusts only a live counter, so a late settlement never resurrects an ended window.
const ADJUST = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
return redis.call('INCRBY', KEYS[1], ARGV[1])
`;

const PEEK = `
local v = redis.call('GET', KEYS[1])
if not v then return nil end
local t = redis.call('TIME')
return {tonumber(v), tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + redis.call('PTTL', KEYS[1])}
`;

type Scripts = {
  mgConsume(key: string, cost: number, limit: number, windowMs: number, resetAt: number): Promise<[number, number, number]>;
  mgAdjust(key: string, delta: number): Promise<number>;
  mgPeek(key: string): Promise<[number, number] | null>;
};

export class RedisCounterStore implements CounterStore {
  readonly kind = 'redis' as const;
  readonly redis: Redis & Scripts;

  constructor(url: string, private readonly prefix = 'mg:') {
    const redis = new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 2, enableOfflineQueue: true });
    redis.defineCommand('mgConsume', { numberOfKeys: 1, lua: CONSUME });
    redis.defineCommand('mgAdjust', { numberOfKeys: 1, lua: ADJUST });
    redis.defineCommand('mgPeek', { numberOfKeys: 1, lua: PEEK });
    redis.on('error', () => {
      // Surfaced by the failing command and by /readyz; ioredis keeps reconnecting.
    });
    this.redis = redis as Redis & Scripts;
  }

  async consume(key: string, cost: number, limit: number, window: { windowMs: number } | { resetAt: number }): Promise<WindowResult> {
    const windowMs = 'windowMs' in window ? window.windowMs : 0;
    const resetAt = 'resetAt' in window ? window.resetAt : 0;
    const [ok, value, reset] = await this.redis.mgConsume(this.prefix + key, cost, limit, windowMs, resetAt);
    return { allowed: ok === 1, value, resetAt: reset };
  }

  async adjust(key: string, delta: number): Promise<number> {
    return this.redis.mgAdjust(this.prefix + key, delta);
  }

  async peek(key: string) {
    const r = await this.redis.mgPeek(this.prefix + key);
    return r ? { value: r[0], resetAt: r[1] } : null;
  }

  async ping() {
    await this.redis.ping();
  }

  async close() {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
