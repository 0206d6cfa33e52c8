import { MemoryCounterStore } from './memory.ts';
import { RedisCounterStore, defaultRedisTimeouts, type RedisTimeouts } from './redis.ts';
import type { CounterStore } from './types.ts';

export type { AdmitResult, CounterStore, HoldSpec, WindowResult, WindowSpec } from './types.ts';
export { CounterStoreUnavailableError, admitted } from './types.ts';
export { defaultRedisTimeouts, type RedisTimeouts } from './redis.ts';

/** Redis when REDIS_URL is set (shared by every instance), else in-process counters. */
export function openCounterStore(redisUrl?: string, prefix?: string, timeouts: RedisTimeouts = defaultRedisTimeouts): CounterStore {
  return redisUrl ? new RedisCounterStore(redisUrl, prefix, timeouts) : new MemoryCounterStore();
}

/** Positive integer milliseconds from the environment, else `fallback`. */
export function envMs(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive number of milliseconds (got '${raw}')`);
  return n;
}
