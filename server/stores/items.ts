// Output items the gateway generated for translated Responses answers (an OpenAI Responses client on
// a model of another provider), kept so that a client sending them back as `item_reference` (the AI
// SDK does, by default) can be served without OpenAI's response storage. Ids are 40 random
// characters; an item lives an hour. With several instances a follow-up may reach another instance
// than the answer did, so with Redis the items are kept there (shared); else in this process.
import type { RedisCounterStore } from './redis.ts';

/** An output item as sent to the client: an object with a string `id`. */
export type GeneratedItem = Record<string, unknown>;

export interface ItemStore {
  /** Keeps items by their `id`. Never waits and never throws: a write that fails is reported to the store's `onError`. */
  remember(items: readonly GeneratedItem[]): void;
  /** The items still kept among `ids` (unknown or expired ids are absent). Rejects with CounterStoreUnavailableError when Redis does not answer. */
  lookup(ids: readonly string[]): Promise<Map<string, GeneratedItem>>;
}

export const ITEM_TTL_MS = 3_600_000;

const idOf = (item: GeneratedItem): string | null => (typeof item.id === 'string' && item.id ? item.id : null);

/** In this process: at most `max` items (the oldest make room), each for `ttlMs`. */
export class MemoryItemStore implements ItemStore {
  private readonly items = new Map<string, { item: GeneratedItem; expires: number }>();
  constructor(
    private readonly max = 50_000,
    private readonly ttlMs = ITEM_TTL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  remember(items: readonly GeneratedItem[]): void {
    const expires = this.now() + this.ttlMs;
    for (const item of items) {
      const id = idOf(item);
      if (!id) continue;
      this.items.delete(id);
      if (this.items.size >= this.max) this.items.delete(this.items.keys().next().value!);
      this.items.set(id, { item, expires });
    }
  }

  async lookup(ids: readonly string[]): Promise<Map<string, GeneratedItem>> {
    const found = new Map<string, GeneratedItem>();
    const now = this.now();
    for (const id of ids) {
      const e = this.items.get(id);
      if (e && e.expires >= now) found.set(id, e.item);
    }
    return found;
  }
}

/**
 * In Redis, shared by every instance: one string key per item (`<prefix>item:<id>`, JSON, expiring
 * with PX), on the counter store's connection and under its outage rules (no offline queue, a
 * deadline per command, CounterStoreUnavailableError when Redis does not answer).
 */
export class RedisItemStore implements ItemStore {
  constructor(
    private readonly store: RedisCounterStore,
    private readonly onError: (err: unknown) => void,
    private readonly ttlMs = ITEM_TTL_MS,
  ) {}

  private key(id: string): string {
    return `${this.store.prefix}item:${id}`;
  }

  remember(items: readonly GeneratedItem[]): void {
    const kept = items.flatMap((item) => {
      const id = idOf(item);
      return id ? [[this.key(id), JSON.stringify(item)] as const] : [];
    });
    if (!kept.length) return;
    // One deadline for the answer's items; the SETs are auto-pipelined with the other commands of
    // this turn, sent before the client can have read the answer that names them, so its
    // follow-up finds them on any instance.
    this.store.run(() => Promise.all(kept.map(([key, json]) => this.store.redis.set(key, json, 'PX', this.ttlMs)))).catch(this.onError);
  }

  async lookup(ids: readonly string[]): Promise<Map<string, GeneratedItem>> {
    const found = new Map<string, GeneratedItem>();
    if (!ids.length) return found;
    const values = await this.store.run(() => this.store.redis.mget(ids.map((id) => this.key(id))));
    values.forEach((v, i) => {
      if (v !== null) found.set(ids[i]!, JSON.parse(v) as GeneratedItem);
    });
    return found;
  }
}
