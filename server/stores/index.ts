import { MemoryCounterStore } from './memory.ts';
import { RedisCounterStore, defaultRedisTimeouts, type RedisTimeouts } from './redis.ts';
import type { CounterStore } from './types.ts';
import { MemoryItemStore, RedisItemStore, type ItemStore } from './items.ts';

export type { AdmitResult, CounterStore, HoldSpec, WindowResult, WindowSpec } from './types.ts';
export { CounterStoreUnavailableError, admitted, heldAmount } from './types.ts';
export { defaultRedisTimeouts, type RedisTimeouts } from './redis.ts';
export type { GeneratedItem, ItemStore } from './items.ts';

/** Redis when REDIS_URL is set (shared by every instance), else in-process counters. */
export function openCounterStore(redisUrl?: string, prefix?: string, timeouts: RedisTimeouts = defaultRedisTimeouts): CounterStore {
  return redisUrl ? new RedisCounterStore(redisUrl, prefix, timeouts) : new MemoryCounterStore();
}

/** Generated Responses items: in Redis beside the counters when they are there (every instance sees them), else in this process. */
export function openItemStore(counters: CounterStore, onError: (err: unknown) => void): ItemStore {
  return counters instanceof RedisCounterStore ? new RedisItemStore(counters, onError) : new MemoryItemStore();
}

/** Positive integer milliseconds from the environment, else `fallback`. */
export function envMs(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive number of milliseconds (got '${raw}')`);
  return n;
}
