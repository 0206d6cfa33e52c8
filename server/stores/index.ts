import { MemoryCounterStore } from './memory.ts';
import { RedisCounterStore } from './redis.ts';
import type { CounterStore } from './types.ts';

export type { CounterStore, WindowResult } from './types.ts';

/** Redis when REDIS_URL is set (shared by every instance), else in-process counters. */
export function openCounterStore(redisUrl?: string, prefix?: string): CounterStore {
  return redisUrl ? new RedisCounterStore(redisUrl, prefix) : new MemoryCounterStore();
}
