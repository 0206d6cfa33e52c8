/**
 * Counters behind limits and quotas. Check and count are one atomic step in the store that
 * holds the counter (DESIGN.md §4 rule 3), so N gateways sharing Redis enforce what one does.
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

export type AdmitResult = {
  rpm: WindowResult;
  /** Null when the request limit refused (nothing was reserved). */
  quota: ReserveResult | null;
};

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
   * first counted cost and lasts `windowMs` (spec 8: requests per minute).
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
   * A request's admission in one step (one round trip to Redis): `hit` on the request window
   * and, when that allowed it, `reserve` on the quota. The keys must share their hash tag.
   */
  admit(
    rpm: { key: string; limit: number; windowMs: number },
    quota: { key: string; id: string; amount: number; limit: number; ttlMs: number; keepUntil: number },
    now: number,
  ): Promise<AdmitResult>;
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
