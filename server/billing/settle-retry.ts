// Quota settlements the counter store did not take (Redis down or stalled), tried again until it
// does. The usage ledger already holds the request (it is written first); this keeps the quota
// counter equal to it: a settlement is applied exactly once, never lost, never counted twice.
//
// Whether a failed attempt may still have been applied decides how the next one is made:
// - never sent (no connection): the settlement is made again as it was, adding the tokens even if
//   the reservation has expired meanwhile;
// - sent without an answer (timeout, connection lost): it may have run, or may run later (bytes
//   held in the network), so later attempts apply only while the reservation is still held, and a
//   reservation gone means it was applied. Were the reservation to expire first (after
//   reservation_ttl_ms, 15 minutes by default) those tokens would be missing from that day's counter
//   — the ledger still has them; the quota counter then under-counts, never over-counts.
import { CounterStoreUnavailableError, type CounterStore } from '../stores/index.ts';
import type { Clock } from '../runtime/clock.ts';

type Pending = { key: string; id: string; actual: number; keepUntil: number; onlyIfHeld: boolean };

export type SettlementLog = {
  warn(msg: string, extra?: Record<string, unknown>): void;
  error(msg: string, extra?: Record<string, unknown>): void;
};

export class SettlementRetries {
  private queue: Pending[] = [];
  private timer: NodeJS.Timeout | null = null;
  private draining = false;
  private failures = 0;
  private closed = false;

  constructor(
    private readonly counters: CounterStore,
    private readonly clock: Clock,
    private readonly log: SettlementLog,
    private readonly opts: { maxPending?: number; firstDelayMs?: number; maxDelayMs?: number } = {},
  ) {}

  /** Settlements waiting for the counter store. */
  get pending(): number {
    return this.queue.length;
  }

  /**
   * Settles now and returns the settled total; a failure the store reports as an outage is queued
   * and retried with backoff (null then).
   */
  async settle(key: string, id: string, actual: number, keepUntil: number, onlyIfHeld = false): Promise<number | null> {
    try {
      return await this.counters.settle(key, id, actual, { keepUntil, now: this.clock.now(), onlyIfHeld });
    } catch (err) {
      this.failed({ key, id, actual, keepUntil, onlyIfHeld }, err);
      return null;
    }
  }

  /**
   * Releases reservation `id` if it exists: for an admission that failed without an answer (it
   * may have been applied, or be applied later when held bytes arrive). Without this its tokens
   * would count against the quota until reservation_ttl_ms. Made from the queue, after the
   * admission in the connection's order.
   */
  release(key: string, id: string, keepUntil: number): void {
    if (this.closed) return;
    this.queue.push({ key, id, actual: 0, keepUntil, onlyIfHeld: true });
    this.schedule();
  }

  private failed(p: Pending, err: unknown) {
    if (!(err instanceof CounterStoreUnavailableError)) {
      this.log.error('quota settlement refused by the counter store; not retried (the request is in the usage ledger)', { err: String(err), key: p.key, id: p.id, tokens: p.actual });
      return;
    }
    if (err.applied === 'unknown') p.onlyIfHeld = true;
    if (this.closed) {
      this.log.error('quota settlement lost at shutdown: the counter under-counts until the day ends (the usage ledger has the request)', { key: p.key, tokens: p.actual });
      return;
    }
    const max = this.opts.maxPending ?? 100_000;
    if (this.queue.length >= max) {
      const dropped = this.queue.shift()!;
      this.log.error('quota settlement retry queue full: the oldest is dropped, its counter under-counts until the day ends (the usage ledger has the request)', { key: dropped.key, tokens: dropped.actual, max });
    }
    this.queue.push(p);
    if (this.queue.length === 1 && !this.draining) this.log.warn('counter store unavailable: quota settlements queued for retry', { err: err.message });
    this.schedule();
  }

  private schedule() {
    if (this.timer || this.draining || this.closed || !this.queue.length) return;
    const first = this.opts.firstDelayMs ?? 250;
    const delay = Math.min(first * 2 ** Math.min(this.failures, 16), this.opts.maxDelayMs ?? 30_000);
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.drain();
    }, delay);
    this.timer.unref();
  }

  /** Tries every queued settlement, in order; stops at the first outage and backs off. */
  async drain(): Promise<void> {
    if (this.draining) return;
    this.draining = true;
    let done = 0;
    try {
      while (this.queue.length) {
        const p = this.queue[0]!;
        const now = this.clock.now();
        if (now >= p.keepUntil) {
          // The quota day is over: its counter is gone and nothing is left to correct.
          this.queue.shift();
          continue;
        }
        try {
          await this.counters.settle(p.key, p.id, p.actual, { keepUntil: p.keepUntil, now, onlyIfHeld: p.onlyIfHeld });
          this.queue.shift();
          done++;
        } catch (err) {
          if (err instanceof CounterStoreUnavailableError) {
            if (err.applied === 'unknown') p.onlyIfHeld = true;
            this.failures++;
            return;
          }
          this.queue.shift();
          this.log.error('quota settlement refused by the counter store; not retried (the request is in the usage ledger)', { err: String(err), key: p.key, tokens: p.actual });
        }
      }
      this.failures = 0;
    } finally {
      this.draining = false;
      if (done && !this.queue.length) this.log.warn(`counter store back: ${done} queued quota settlement(s) applied`);
      this.schedule();
    }
  }

  /** One last attempt (bounded by the store's command timeout), then whatever is left is logged as lost. */
  async close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.closed = true;
    if (this.queue.length) await this.drain();
    if (this.queue.length) {
      this.log.error(`${this.queue.length} quota settlement(s) not applied at shutdown: those keys' counters under-count until the day ends (the usage ledger has the requests)`);
      this.queue = [];
    }
  }
}
