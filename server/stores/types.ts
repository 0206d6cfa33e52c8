/**
 * Counters behind limits and quotas. Check and count are one atomic step in the store that
 * holds the counter (decision 0003), so N gateways sharing Redis enforce what one does.
 * Every call takes `now` from the caller's clock, so tests can move time instead of sleeping.
 */
export type WindowResult = {
  /** Whether `cost` fitted under `limit` and was counted. */
  allowed: boolean;
  /** The counter after the call (unchanged when refused). */
  value: number;
  /** When the window ends (epoch ms). */
  resetAt: number;
};

export type ReserveResult = {
  allowed: boolean;
  /** Settled plus live reservations, before this one. */
  used: number;
};

/** A fixed request window to count one request in (requests per minute: docs/api.md, "Limits on requests"). */
export type WindowSpec = { key: string; limit: number; windowMs: number };

/**
 * A reservation of `amount` under `limit` for `id` (see `reserve`). `upTo`, when more than
 * `amount`: the request may use up to that much, of which only `amount` is bounded. It is admitted
 * when `amount` fits, as any request; it then holds `upTo` when that fits too, and otherwise the
 * whole `limit`: the counter reads full until it settles, so nothing else is admitted on it
 * meanwhile (what it uses beyond the limit is its own alone). Infinity: no bound at all.
 */
export type HoldSpec = { key: string; id: string; amount: number; limit: number; ttlMs: number; keepUntil: number; upTo?: number };

/** What a hold of `spec` takes when `used` is already held or settled, once admitted (`amount` fits). */
export const heldAmount = (spec: HoldSpec, used: number): number =>
  spec.upTo === undefined || spec.upTo <= spec.amount ? spec.amount : used + spec.upTo <= spec.limit ? spec.upTo : spec.limit;

export type AdmitResult = {
  /**
   * Each window, in the order given: `allowed` when it had room. The request is counted in all of
   * them only when all had room (`value` is then the count after it); otherwise in none.
   */
  windows: WindowResult[];
  /**
   * Each quota, in order, with what it held before: reserved in all of them only when all had
   * room. Null when a window refused (no quota was looked at).
   */
  quotas: ReserveResult[] | null;
};

/** Whether an admission let the request in: every window and every quota had room. */
export const admitted = (r: AdmitResult): boolean => r.windows.every((w) => w.allowed) && r.quotas !== null && r.quotas.every((q) => q.allowed);

/**
 * The counter store could not answer (Redis refused, dropped or stalled past the command timeout).
 * `applied` says whether the command may have run all the same: 'no' when it was never sent (no
 * connection), 'unknown' when it was sent and no answer came (it may have run, or run later).
 */
export class CounterStoreUnavailableError extends Error {
  constructor(
    readonly applied: 'no' | 'unknown',
    options?: { cause?: unknown },
  ) {
    super(`counter store unavailable: ${(options?.cause as Error | undefined)?.message ?? 'no answer'}`, options);
    this.name = 'CounterStoreUnavailableError';
  }
}

export interface CounterStore {
  readonly kind: 'memory' | 'redis';
  /**
   * Fixed window: adds `cost` to `key` if the result stays ≤ `limit`. The window starts with the
   * first counted cost and lasts `windowMs` (requests per minute: docs/api.md, "Limits on requests").
   */
  hit(key: string, cost: number, limit: number, windowMs: number, now: number): Promise<WindowResult>;
  /** The open window of `key`, or null. */
  peekWindow(key: string, now: number): Promise<{ value: number; resetAt: number } | null>;

  /**
   * Reserves `amount` under `limit` for `id`, counting what was settled on `key` plus every live
   * reservation. A reservation not settled within `ttlMs` (its holder crashed) stops counting.
   * `keepUntil` is how long the settled total must be kept (e.g. the end of the quota day).
   */
  reserve(key: string, id: string, amount: number, limit: number, opts: { ttlMs: number; keepUntil: number; now: number }): Promise<ReserveResult>;
  /**
   * A request's admission in one step (one round trip to Redis), over several levels at once (an
   * API key's limits and its user's): the request counted in every window and the amounts reserved
   * in every quota, all or nothing. The windows are checked first: when one has no room, nothing
   * is counted and no quota looked at. Every key must carry the same hash tag.
   */
  admit(windows: WindowSpec[], quotas: HoldSpec[], now: number): Promise<AdmitResult>;
  /**
   * Ends reservation `id` and adds `actual` to the settled total. Returns the settled total.
   * `onlyIfHeld`: do nothing unless `id` still holds its reservation, so a retry of a settlement
   * that may already have been applied cannot count it twice.
   */
  settle(key: string, id: string, actual: number, opts: { keepUntil: number; now: number; onlyIfHeld?: boolean }): Promise<number>;
  /** Settled total and the sum of live reservations. */
  reserved(key: string, now: number): Promise<{ settled: number; reserved: number; holders: number }>;

  ping(): Promise<void>;
  close(): Promise<void>;
}
