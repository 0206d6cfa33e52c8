/**
 * Counters behind limits and quotas. Check and count are one atomic step in the store that
 * holds the counter (DESIGN.md §4 rule 3), so N gateways sharing Redis enforce what one does.
 */
export type WindowResult = {
  /** Whether `cost` fitted under `limit` and was counted. */
  allowed: boolean;
  /** The counter after the call (unchanged when refused). */
  value: number;
  /** When the window ends (epoch ms). */
  resetAt: number;
};

export interface CounterStore {
  readonly kind: 'memory' | 'redis';
  /**
   * Adds `cost` to the counter `key` if the result stays ≤ `limit`. The window starts with the
   * first counted cost and lasts `windowMs` (or ends at `resetAt` when given, e.g. 00:00 UTC).
   */
  consume(key: string, cost: number, limit: number, window: { windowMs: number } | { resetAt: number }): Promise<WindowResult>;
  /** Adds `delta` (may be negative) to a live counter; no-op when the window has ended. Returns the new value. */
  adjust(key: string, delta: number): Promise<number>;
  /** Current value and window end, or null when no window is open. */
  peek(key: string): Promise<{ value: number; resetAt: number } | null>;
  ping(): Promise<void>;
  close(): Promise<void>;
}
