// The holds every instance shares (breakers and key cool-downs), in the routing-state store and
// mirrored here: read on the request path from memory, written through to the store, and
// re-read from it every `routing.sync_ms`. A store that is away is said once; this instance goes
// on with its own holds meanwhile.
import type { Clock } from '../runtime/clock.ts';
import type { RouteHold, RoutingStateStore } from '../stores/routing-state.ts';

export class SharedHolds {
  private holds = new Map<string, RouteHold>();
  /** When this instance ended a target's hold: a snapshot read before then does not bring it back. */
  private readonly ended = new Map<string, number>();
  private readonly timer: NodeJS.Timeout | null;
  private syncing = false;
  private storeFailed = false;

  constructor(
    readonly store: RoutingStateStore,
    private readonly clock: Clock,
    syncMs: number,
    private readonly log: { warn(obj: object, msg: string): void },
  ) {
    this.timer = store.shared ? setInterval(() => void this.sync(), syncMs) : null;
    this.timer?.unref();
    if (store.shared) void this.sync();
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
  }

  get(target: string): RouteHold | undefined {
    return this.holds.get(target);
  }

  has(target: string): boolean {
    return this.holds.has(target);
  }

  /** A hold begins (or is renewed) here and for every instance. */
  put(hold: RouteHold): void {
    this.holds.set(hold.target, hold);
    this.store.put(hold).catch((err) => this.warn(err));
  }

  /** A hold ends here and for every instance. */
  clear(target: string): void {
    this.holds.delete(target);
    this.ended.set(target, this.clock.now());
    this.store.clear(target).catch((err) => this.warn(err));
  }

  /**
   * Reads the holds every instance shared. Those this instance wrote meanwhile are kept; those it
   * ended after they began are not brought back by a snapshot read before it ended them.
   */
  async sync(): Promise<void> {
    if (this.syncing) return;
    this.syncing = true;
    const started = this.clock.now();
    try {
      const shared = await this.store.snapshot();
      const next = new Map<string, RouteHold>();
      for (const h of shared) if ((this.ended.get(h.target) ?? -Infinity) < h.since) next.set(h.target, h);
      for (const [target, h] of this.holds) if (h.since >= started && !next.has(target)) next.set(target, h);
      this.holds = next;
      for (const [target, at] of this.ended) if (at < started - 60_000) this.ended.delete(target);
      this.storeFailed = false;
    } catch (err) {
      this.warn(err);
    } finally {
      this.syncing = false;
    }
  }

  /** The store (or the counters) could not be read or written: said once until the next good sync. */
  readonly warn = (err: unknown): void => {
    if (this.storeFailed) return;
    this.storeFailed = true;
    this.log.warn({ err: (err as Error).message }, 'routing: the shared breaker and cool-down states could not be read or written; this instance goes on with its own');
  };
}
