import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';
import { CounterStoreUnavailableError, type AdmitResult, type CounterStore, type HoldSpec, type ReserveResult, type WindowResult, type WindowSpec } from './types.ts';

// A window is a hash {v: count, r: reset epoch ms}; the caller's clock decides when it rolls, and
// the key's TTL only collects garbage. Check and add are one step (ADMIT does the same over
// several windows, all checked before any is added).
const HIT_FUNCTION = `
local function hit(key, cost, limit, window, now)
  local v = tonumber(redis.call('HGET', key, 'v') or '0')
  local r = tonumber(redis.call('HGET', key, 'r') or '0')
  if now >= r then
    v = 0
    r = now + window
  end
  if v + cost > limit then return {0, v, r} end
  v = v + cost
  redis.call('HSET', key, 'v', v, 'r', r)
  redis.call('PEXPIRE', key, r - now + 1000)
  return {1, v, r}
end
`;

const HIT = `
${HIT_FUNCTION}
return hit(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]))
`;

const PEEK_WINDOW = `
local r = tonumber(redis.call('HGET', KEYS[1], 'r') or '0')
if tonumber(ARGV[1]) >= r then return nil end
return {tonumber(redis.call('HGET', KEYS[1], 'v')), r}
`;

// Quota: k1 settled total, k2 hash id -> amount plus the field `total` (their sum, kept as holds
// come and go, so admission costs the same with 5 or 5,000 requests in flight; ids always contain
// ':', so no id is `total`), k3 zset id -> expiry. Expired reservations (their holder crashed) are
// dropped before counting. `used` returns {settled, reserved}; `hold` adds (or replaces) one.
const QUOTA_FUNCTIONS = `
local function used(k1, k2, k3, now)
  local expired = redis.call('ZRANGEBYSCORE', k3, '-inf', now)
  if #expired > 0 then
    local dropped = 0
    for _, id in ipairs(expired) do
      local a = redis.call('HGET', k2, id)
      if a then
        dropped = dropped + tonumber(a)
        redis.call('HDEL', k2, id)
      end
    end
    redis.call('ZREMRANGEBYSCORE', k3, '-inf', now)
    if dropped > 0 then redis.call('HINCRBY', k2, 'total', -dropped) end
  end
  return tonumber(redis.call('GET', k1) or '0'), tonumber(redis.call('HGET', k2, 'total') or '0')
end
local function hold(k2, k3, id, amount, ttl, now)
  local previous = tonumber(redis.call('HGET', k2, id) or '0')
  redis.call('HSET', k2, id, amount)
  redis.call('HINCRBY', k2, 'total', tonumber(amount) - previous)
  redis.call('ZADD', k3, now + ttl, id)
  redis.call('PEXPIRE', k2, ttl + 60000)
  redis.call('PEXPIRE', k3, ttl + 60000)
end
`;

// Reserves ARGV[2] (the string as sent, stored as is) for ARGV[1] on KEYS[1..3]: {ok, used before}.
const RESERVE = `
${QUOTA_FUNCTIONS}
local now = tonumber(ARGV[6])
local settled, reserved = used(KEYS[1], KEYS[2], KEYS[3], now)
if settled + reserved + tonumber(ARGV[2]) > tonumber(ARGV[3]) then return {0, settled + reserved} end
hold(KEYS[2], KEYS[3], ARGV[1], ARGV[2], tonumber(ARGV[4]), now)
return {1, settled + reserved}
`;

// Admissions over nw windows (KEYS[1..nw]) and nq quotas (three keys each, after the windows),
// several in one call (those of one event-loop turn for the same keys), each as if alone, in order.
// ARGV: nw, nq, then per admission: now, (limit, window ms) per window, (id, amount, limit,
// ttl ms, up to) per quota. Every window is checked before any is counted, every quota before any
// is reserved: all or nothing. A quota's hold is its amount; when "up to" is more (HoldSpec.upTo),
// that when it fits too, else the whole limit. Returned per admission: (ok, value, reset) per
// window, then — when every window had room — (ok, used before) per quota.
const ADMIT = `
${QUOTA_FUNCTIONS}
local nw, nq = tonumber(ARGV[1]), tonumber(ARGV[2])
local out = {}
for b = 3, #ARGV, 1 + 2 * nw + 5 * nq do
  local now = tonumber(ARGV[b])
  local res, values, resets, fits = {}, {}, {}, true
  for i = 1, nw do
    local v = tonumber(redis.call('HGET', KEYS[i], 'v') or '0')
    local r = tonumber(redis.call('HGET', KEYS[i], 'r') or '0')
    if now >= r then
      v = 0
      r = now + tonumber(ARGV[b + 2 * i])
    end
    values[i], resets[i] = v, r
    if v + 1 > tonumber(ARGV[b + 2 * i - 1]) then fits = false end
  end
  if fits then
    for i = 1, nw do
      values[i] = values[i] + 1
      redis.call('HSET', KEYS[i], 'v', values[i], 'r', resets[i])
      redis.call('PEXPIRE', KEYS[i], resets[i] - now + 1000)
      res[#res + 1], res[#res + 2], res[#res + 3] = 1, values[i], resets[i]
    end
    local totals, room = {}, true
    local q0 = b + 2 * nw
    for j = 1, nq do
      local k = nw + 3 * (j - 1)
      local settled, reserved = used(KEYS[k + 1], KEYS[k + 2], KEYS[k + 3], now)
      totals[j] = settled + reserved
      if totals[j] + tonumber(ARGV[q0 + 5 * j - 3]) > tonumber(ARGV[q0 + 5 * j - 2]) then room = false end
    end
    for j = 1, nq do
      local k = nw + 3 * (j - 1)
      local amount, limit, upto = ARGV[q0 + 5 * j - 3], ARGV[q0 + 5 * j - 2], ARGV[q0 + 5 * j]
      local fit = totals[j] + tonumber(amount) <= tonumber(limit)
      if room then
        local held = amount
        if tonumber(upto) > tonumber(amount) then
          if totals[j] + tonumber(upto) <= tonumber(limit) then held = upto else held = limit end
        end
        hold(KEYS[k + 2], KEYS[k + 3], ARGV[q0 + 5 * j - 4], held, tonumber(ARGV[q0 + 5 * j - 1]), now)
      end
      res[#res + 1], res[#res + 2] = fit and 1 or 0, totals[j]
    end
  else
    for i = 1, nw do
      local limit = tonumber(ARGV[b + 2 * i - 1])
      res[#res + 1], res[#res + 2], res[#res + 3] = (values[i] + 1 <= limit) and 1 or 0, values[i], resets[i]
    end
  end
  out[#out + 1] = res
end
return out
`;

// Settlements of one quota, several in one call (those of one event-loop turn): ARGV is the list of
// (id, actual, keepUntil, now, onlyIfHeld) tuples, one settled total returned per tuple, in order.
// onlyIfHeld = '1': only while the reservation is held (a retry that must not count twice).
const SETTLE = `
local out = {}
for b = 1, #ARGV, 5 do
  local id = ARGV[b]
  local held = redis.call('HGET', KEYS[2], id)
  if held or ARGV[b + 4] ~= '1' then
    if held then
      redis.call('HDEL', KEYS[2], id)
      redis.call('HINCRBY', KEYS[2], 'total', -tonumber(held))
    end
    redis.call('ZREM', KEYS[3], id)
    local actual = tonumber(ARGV[b + 1])
    if actual > 0 then
      redis.call('INCRBY', KEYS[1], actual)
      local keep = tonumber(ARGV[b + 2]) - tonumber(ARGV[b + 3])
      if keep > 0 then redis.call('PEXPIRE', KEYS[1], keep + 60000) end
    end
  end
  out[#out + 1] = tonumber(redis.call('GET', KEYS[1]) or '0')
end
return out
`;

const RESERVED = `
${QUOTA_FUNCTIONS}
local settled, reserved = used(KEYS[1], KEYS[2], KEYS[3], tonumber(ARGV[1]))
return {settled, reserved, redis.call('HLEN', KEYS[2]) - redis.call('HEXISTS', KEYS[2], 'total')}
`;

type Scripts = {
  mgHit(key: string, cost: number, limit: number, windowMs: number, now: number): Promise<[number, number, number]>;
  mgPeekWindow(key: string, now: number): Promise<[number, number] | null>;
  mgReserve(k1: string, k2: string, k3: string, id: string, amount: number, limit: number, ttl: number, keepUntil: number, now: number): Promise<[number, number]>;
  mgAdmit(numberOfKeys: number, ...keysAndArgs: (string | number)[]): Promise<number[][]>;
  mgSettle(k1: string, k2: string, k3: string, ...tuples: (string | number)[]): Promise<number[]>;
  mgReserved(k1: string, k2: string, k3: string, now: number): Promise<[number, number, number]>;
};

/** How the gateway talks to Redis when it is slow or gone (REDIS_*_TIMEOUT_MS). */
export type RedisTimeouts = {
  /** A command without an answer after this fails (the request gets 503): default 1,000 ms. */
  commandMs: number;
  /** A connection attempt that takes longer is abandoned and retried: default 2,000 ms. */
  connectMs: number;
  /** Longest pause between reconnection attempts: default 1,000 ms. */
  reconnectMaxMs: number;
};

export const defaultRedisTimeouts: RedisTimeouts = { commandMs: 1_000, connectMs: 2_000, reconnectMaxMs: 1_000 };

const NOT_SENT = "Stream isn't writeable";

// Required when a Redis store is made, not at start-up: a gateway on in-process counters does
// without ioredis (~2 MB of heap). Synchronous, so the store is still made in its constructor.
const ioredis = () => createRequire(import.meta.url)('ioredis') as typeof import('ioredis');

type Waiting<T> = { resolve(value: T): void; reject(err: unknown): void };

export class RedisCounterStore implements CounterStore {
  readonly kind = 'redis' as const;
  readonly redis: Redis & Scripts;
  /** Until the first connection is up: commands wait for it (start-up), up to the connect timeout. */
  private firstConnection: Promise<void> | null;
  private readonly commandMs: number;

  constructor(
    url: string,
    readonly prefix = 'mg:',
    timeouts: RedisTimeouts = defaultRedisTimeouts,
  ) {
    // Auto-pipelining sends the commands of one event-loop turn in one write: a socket write per
    // command was a sixth of the main thread's time under load.
    //
    // Outages (docs/decisions/0010-store-outages.md): no offline queue, so while there is no
    // connection a command fails at once instead of waiting for one; every command sent has
    // `commandTimeout` to answer; and a command sent on a connection that died is never sent
    // again by ioredis (`autoResendUnfulfilledCommands`), because a settlement applied twice would
    // count tokens twice: the billing service retries it itself, knowing how.
    const redis = new (ioredis().Redis)(url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      autoResendUnfulfilledCommands: false,
      commandTimeout: timeouts.commandMs,
      connectTimeout: timeouts.connectMs,
      retryStrategy: (times) => Math.min(times * 100, timeouts.reconnectMaxMs),
      enableAutoPipelining: true,
    });
    redis.defineCommand('mgHit', { numberOfKeys: 1, lua: HIT });
    redis.defineCommand('mgPeekWindow', { numberOfKeys: 1, lua: PEEK_WINDOW });
    redis.defineCommand('mgReserve', { numberOfKeys: 3, lua: RESERVE });
    // The number of keys varies (windows and quotas of one or two levels): given with each call.
    redis.defineCommand('mgAdmit', { lua: ADMIT });
    redis.defineCommand('mgSettle', { numberOfKeys: 3, lua: SETTLE });
    redis.defineCommand('mgReserved', { numberOfKeys: 3, lua: RESERVED });
    redis.on('error', () => {
      // Surfaced by the failing command and by /readyz; ioredis keeps reconnecting.
    });
    this.redis = redis as Redis & Scripts;
    this.commandMs = timeouts.commandMs;
    this.firstConnection = this.ready(timeouts.connectMs).then(() => {
      this.firstConnection = null;
    });
  }

  /** Resolves once connected, or after `ms` (the first requests then get 503 until it is). */
  async ready(ms: number): Promise<boolean> {
    if (this.redis.status === 'ready') return true;
    return new Promise((resolve) => {
      const done = (ok: boolean) => {
        clearTimeout(timer);
        this.redis.off('ready', onReady);
        resolve(ok);
      };
      const onReady = () => done(true);
      const timer = setTimeout(() => done(false), ms);
      this.redis.on('ready', onReady);
    });
  }

  /**
   * `command`, its failure turned into CounterStoreUnavailableError saying whether it may have run.
   * The deadline is the caller's: ioredis times a command from when it is written, and an
   * auto-pipelined command waits for the batch before it (itself up to a command timeout) first.
   */
  async run<T>(command: () => Promise<T>): Promise<T> {
    if (this.firstConnection) await this.firstConnection;
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        command(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${this.commandMs} ms`)), this.commandMs);
        }),
      ]);
    } catch (err) {
      throw new CounterStoreUnavailableError((err as Error).message?.startsWith(NOT_SENT) ? 'no' : 'unknown', { cause: err });
    } finally {
      clearTimeout(timer);
    }
  }

  // The callers' keys carry their hash tag ({api key id}), so a quota's three keys and the
  // request window of the same API key live on one Redis Cluster slot.
  private quotaKeys(key: string): [string, string, string] {
    const base = this.prefix + key;
    return [`${base}:settled`, `${base}:holds`, `${base}:expiry`];
  }

  /**
   * The admissions of one event-loop turn for the same windows and quotas go to Redis as one
   * script call, each applied as if alone and in order; a call that fails fails each alike. At
   * one request at a time this is one call per request, as before; under load, a fraction.
   */
  admit(windows: WindowSpec[], quotas: HoldSpec[], now: number): Promise<AdmitResult> {
    return new Promise((resolve, reject) => {
      let batchKey = '';
      for (const w of windows) batchKey += `${w.key}\u0000`;
      for (const q of quotas) batchKey += `${q.key}\u0000`;
      let batch = this.admitting.get(batchKey);
      if (!batch) {
        const keys: string[] = windows.map((w) => this.prefix + w.key);
        for (const q of quotas) keys.push(...this.quotaKeys(q.key));
        this.admitting.set(batchKey, (batch = { keys, windows: windows.length, quotas: quotas.length, args: [], waiting: [] }));
        if (this.admitting.size === 1) setImmediate(this.sendAdmissions);
      }
      batch.args.push(now);
      for (const w of windows) batch.args.push(w.limit, w.windowMs);
      // Up to: the amount when not given; never past the limit + 1 (an unbounded request holds the limit).
      for (const q of quotas) batch.args.push(q.id, q.amount, q.limit, q.ttlMs, q.upTo === undefined ? q.amount : Math.min(q.upTo, q.limit + 1));
      batch.waiting.push({ resolve, reject });
    });
  }

  private readonly admitting = new Map<string, { keys: string[]; windows: number; quotas: number; args: (string | number)[]; waiting: Waiting<AdmitResult>[] }>();

  private readonly sendAdmissions = () => {
    for (const { keys, windows, quotas, args, waiting } of this.admitting.values()) {
      this.run(() => this.redis.mgAdmit(keys.length, ...keys, windows, quotas, ...args)).then(
        (results) =>
          waiting.forEach((w, i) => {
            const r = results[i]!;
            const ws: WindowResult[] = [];
            for (let j = 0; j < windows; j++) ws.push({ allowed: r[3 * j] === 1, value: r[3 * j + 1]!, resetAt: r[3 * j + 2]! });
            const qs: ReserveResult[] | null = ws.every((x) => x.allowed) ? [] : null;
            for (let j = 0; qs && j < quotas; j++) qs.push({ allowed: r[3 * windows + 2 * j] === 1, used: r[3 * windows + 2 * j + 1]! });
            w.resolve({ windows: ws, quotas: qs });
          }),
        (err) => waiting.forEach((w) => w.reject(err)),
      );
    }
    this.admitting.clear();
  };

  async hit(key: string, cost: number, limit: number, windowMs: number, now: number): Promise<WindowResult> {
    const [ok, value, resetAt] = await this.run(() => this.redis.mgHit(this.prefix + key, cost, limit, windowMs, now));
    return { allowed: ok === 1, value, resetAt };
  }

  async peekWindow(key: string, now: number) {
    const r = await this.run(() => this.redis.mgPeekWindow(this.prefix + key, now));
    return r ? { value: r[0], resetAt: r[1] } : null;
  }

  async reserve(key: string, id: string, amount: number, limit: number, opts: { ttlMs: number; keepUntil: number; now: number }): Promise<ReserveResult> {
    const [ok, used] = await this.run(() => this.redis.mgReserve(...this.quotaKeys(key), id, amount, limit, opts.ttlMs, opts.keepUntil, opts.now));
    return { allowed: ok === 1, used };
  }

  /**
   * Settlements are not awaited by the requests that make them: those of one event-loop turn for
   * the same quota go to Redis as one script call (under load, a fraction of a call each), issued
   * before that turn's I/O ends, so ahead of any later request's admission. A call that fails
   * fails each of its settlements alike (each then retried on its own, settle-retry.ts).
   */
  settle(key: string, id: string, actual: number, opts: { keepUntil: number; now: number; onlyIfHeld?: boolean }): Promise<number> {
    return new Promise((resolve, reject) => {
      let batch = this.settling.get(key);
      if (!batch) {
        this.settling.set(key, (batch = { args: [], waiting: [] }));
        if (this.settling.size === 1) setImmediate(this.sendSettlements);
      }
      batch.args.push(id, actual, opts.keepUntil, opts.now, opts.onlyIfHeld ? 1 : 0);
      batch.waiting.push({ resolve, reject });
    });
  }

  private readonly settling = new Map<string, { args: (string | number)[]; waiting: Waiting<number>[] }>();

  private readonly sendSettlements = () => {
    for (const [key, { args, waiting }] of this.settling) {
      this.run(() => this.redis.mgSettle(...this.quotaKeys(key), ...args)).then(
        (totals) => waiting.forEach((w, i) => w.resolve(totals[i]!)),
        (err) => waiting.forEach((w) => w.reject(err)),
      );
    }
    this.settling.clear();
  };

  async reserved(key: string, now: number) {
    const [settled, reserved, holders] = await this.run(() => this.redis.mgReserved(...this.quotaKeys(key), now));
    return { settled, reserved, holders };
  }

  async ping() {
    await this.run(() => this.redis.ping());
  }

  async close() {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
