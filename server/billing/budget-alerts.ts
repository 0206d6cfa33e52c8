// Budget alerts (issue 34; docs/billing.md "Budget alerts"): when a settlement takes a spend budget
// (a key's or a user's, daily or monthly) across one of the configured thresholds (50/80/100 % by
// default), an alert is recorded once per (scope, owner, period, period start, threshold) across
// every instance: a unique index and INSERT … ON CONFLICT DO NOTHING, and only the instance whose
// insert made the row sends it. It is POSTed to `budget_alerts.webhook_url`, signed (HMAC-SHA256,
// Stripe's scheme), off the request path. A failed delivery is retried with exponential backoff,
// and the retries live in the table: whichever instance sweeps first claims a due row with a lease
// (FOR UPDATE SKIP LOCKED), so a restart or another instance carries them on and no two instances
// send one alert at the same time. Delivery is at least once (a process that dies after the
// receiver answered but before recording it sends it again): receivers dedupe on X-Gateway-Delivery.
// Without a webhook, alerts are recorded all the same ('disabled') for the usage reports and the
// dashboard. The webhook's address and secret never reach a log or a stored error: the host at most.
//
// This file decides what to record and when to send; the parts are in budget-alerts/: which
// thresholds a settlement crossed (thresholds.ts), the table (store.ts), one attempt (webhook.ts)
// and its signature (signing.ts).
import type { ResolvedConfig } from '../config/schema.ts';
import type { SqlQueryable } from '../db/migrate.ts';
import { systemClock, type Clock } from '../runtime/clock.ts';
import { newId } from '../runtime/secrets.ts';
import { within } from '../runtime/within.ts';
import { isUtcDay } from './plans.ts';
import { crossedThresholds } from './budget-alerts/thresholds.ts';
import { BudgetAlertStore, isoTime, type AlertCandidate, type BudgetAlertFilter, type BudgetAlertView, type BudgetPeriod, type BudgetScope } from './budget-alerts/store.ts';
import { WebhookSender, type DeliveryOutcome } from './budget-alerts/webhook.ts';

/** One settlement's effect on one budget counter, in nano-dollars (1 USD = 1e9). */
export type BudgetObservation = {
  scope: BudgetScope;
  userId: string;
  /** The key whose request it was; required for scope 'key' (it owns that budget). */
  keyId: string | null;
  period: BudgetPeriod;
  /** The UTC period: YYYY-MM-DD (daily) or YYYY-MM (monthly). */
  periodStart: string;
  limitNano: number;
  beforeNano: number;
  afterNano: number;
  /** When the spend happened (epoch ms): the alert's created_at. */
  at: number;
};

const MONTH = /^\d{4}-(0[1-9]|1[0-2])$/;

export type BudgetAlertsLog = {
  info?(msg: string, extra?: Record<string, unknown>): void;
  warn(msg: string, extra?: Record<string, unknown>): void;
  error(msg: string, extra?: Record<string, unknown>): void;
};

export type BudgetAlertsOptions = {
  clock?: Clock;
  log?: BudgetAlertsLog;
  /** Delay after the first failed attempt; doubled after each further one (default 1,000 ms). */
  backoffMs?: number;
  /** Longest delay between attempts (default 300,000 ms). */
  maxBackoffMs?: number;
  /** One attempt's limit, connection to last byte (default 10,000 ms). */
  timeoutMs?: number;
  /** How often due deliveries are looked for in the table (default 5,000 ms); this instance's own retries are also woken on time. */
  sweepMs?: number;
  /** How long a claimed alert is this instance's to send (default timeoutMs + 20,000). */
  leaseMs?: number;
  /** Deliveries in flight at once on this instance (default 8); more wait for the sweep. */
  maxConcurrent?: number;
  /** Alerts kept in memory while the database does not take them (default 10,000). */
  maxUnrecorded?: number;
};

export class BudgetAlerts {
  private readonly clock: Clock;
  private readonly log: BudgetAlertsLog;
  private readonly backoffMs: number;
  private readonly maxBackoffMs: number;
  private readonly timeoutMs: number;
  private readonly sweepMs: number;
  private readonly leaseMs: number;
  private readonly maxConcurrent: number;
  private readonly maxUnrecorded: number;
  private readonly store: BudgetAlertStore;
  /** Null when alerts are only recorded (no webhook configured). */
  private readonly sender: WebhookSender | null;
  private closed = false;
  private interval: NodeJS.Timeout | null = null;
  private wake: { timer: NodeJS.Timeout; at: number } | null = null;
  private sweeping: Promise<void> | null = null;
  private sweepAgain = false;
  /** Inserts under way (awaited at close). */
  private readonly recording = new Set<Promise<void>>();
  /** Deliveries under way, each with the controller that ends it at close. */
  private readonly inFlight = new Map<Promise<void>, AbortController>();
  /** Alerts the database did not take yet (it was unreachable): tried again at each sweep. */
  private unrecorded: AlertCandidate[] = [];
  private readonly lastLogged = new Map<string, number>();

  constructor(
    sql: Pick<SqlQueryable, 'query'>,
    private readonly config: ResolvedConfig['budgetAlerts'],
    opts: BudgetAlertsOptions = {},
  ) {
    this.clock = opts.clock ?? systemClock();
    this.log = opts.log ?? { warn: () => {}, error: () => {} };
    this.backoffMs = opts.backoffMs ?? 1_000;
    this.maxBackoffMs = opts.maxBackoffMs ?? 300_000;
    this.timeoutMs = opts.timeoutMs ?? 10_000;
    this.sweepMs = opts.sweepMs ?? 5_000;
    this.leaseMs = opts.leaseMs ?? this.timeoutMs + 20_000;
    this.maxConcurrent = opts.maxConcurrent ?? 8;
    this.maxUnrecorded = opts.maxUnrecorded ?? 10_000;
    this.store = new BudgetAlertStore(sql);
    const url = config.webhook_url;
    this.sender = url && config.secret ? new WebhookSender({ url, host: new URL(url).host, secret: config.secret }, this.timeoutMs) : null;
  }

  /** The webhook's host (for start-up messages), or null when alerts are only recorded. */
  get webhookHost(): string | null {
    return this.sender?.webhook.host ?? null;
  }

  /**
   * A settlement moved a budget counter from `beforeNano` to `afterNano`: each configured threshold
   * it crossed is recorded (once per period across instances) and sent. Returns at once; never
   * throws; nothing waits on it.
   */
  observe(c: BudgetObservation): void {
    try {
      if (this.closed) return;
      const crossed = crossedThresholds(this.config.thresholds, c.limitNano, c.beforeNano, c.afterNano);
      if (!crossed.length) return;
      const ownerId = c.scope === 'key' ? c.keyId : c.scope === 'user' ? c.userId : null;
      const periodOk = c.period === 'daily' ? isUtcDay(c.periodStart) : c.period === 'monthly' && MONTH.test(c.periodStart);
      if (!ownerId || !c.userId || !periodOk || !Number.isFinite(c.at)) {
        this.throttled('error', 'invalid', 'budget alert not recorded: invalid observation', { scope: c.scope, period: c.period, period_start: c.periodStart });
        return;
      }
      const createdAt = isoTime(c.at);
      const limitNano = String(Math.round(c.limitNano));
      const spentNano = String(Math.round(c.afterNano));
      this.record(
        crossed.map((threshold) => ({
          id: newId('bal'),
          scope: c.scope,
          ownerId,
          userId: c.userId,
          keyId: c.keyId ?? null,
          period: c.period,
          periodStart: c.periodStart,
          threshold,
          limitNano,
          spentNano,
          createdAt,
        })),
      );
    } catch (err) {
      this.throttled('error', 'observe', 'budget alert not recorded', { err: String(err) });
    }
  }

  /** Recent alerts, newest first. */
  list(filter: BudgetAlertFilter = {}): Promise<BudgetAlertView[]> {
    return this.store.list(filter);
  }

  /** Starts the periodic sweep (due retries, alerts the database did not take yet). */
  start(): void {
    if (this.closed || this.interval) return;
    this.interval = setInterval(() => this.kick(), this.sweepMs);
    this.interval.unref();
    if (this.sender) this.kick();
  }

  /**
   * Stops sweeping; deliveries under way get a moment to finish, the rest are abandoned unrecorded
   * (their lease released, so any instance sends them again at once); alerts not yet in the
   * database get one more try.
   */
  async close(graceMs = 2_000): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.interval) clearInterval(this.interval);
    if (this.wake) clearTimeout(this.wake.timer);
    this.interval = null;
    this.wake = null;
    await this.sweeping;
    await Promise.allSettled([...this.recording]);
    if (this.inFlight.size) {
      await within(Promise.allSettled([...this.inFlight.keys()]), graceMs);
      for (const controller of this.inFlight.values()) controller.abort();
      await Promise.allSettled([...this.inFlight.keys()]);
    }
    if (this.unrecorded.length) {
      const left = this.unrecorded;
      this.unrecorded = [];
      await this.insert(left, false).catch((err) => this.log.error(`${left.length} budget alert(s) not recorded at shutdown: the database did not take them`, { err: String(err) }));
    }
    await this.sender?.close();
  }

  /** Inserts the alerts; those this insert made (not another instance's) are sent. */
  private record(candidates: AlertCandidate[]): void {
    const claim = !!this.sender && !this.closed && this.inFlight.size < this.maxConcurrent;
    const p = this.insert(candidates, claim)
      .then((rows) => {
        if (claim) for (const row of rows) this.deliver(row);
        else if (this.sender && rows.length) this.kick();
      })
      .catch((err) => this.keepUnrecorded(candidates, err))
      .finally(() => this.recording.delete(p));
    this.recording.add(p);
  }

  private keepUnrecorded(candidates: AlertCandidate[], err: unknown): void {
    this.throttled('error', 'record', 'budget alert not recorded yet: the database did not take it; retried at the next sweep', { err: String(err) });
    if (this.closed) {
      this.log.error(`${candidates.length} budget alert(s) lost at shutdown: the database did not take them`);
      return;
    }
    this.unrecorded.push(...candidates);
    const over = this.unrecorded.length - this.maxUnrecorded;
    if (over > 0) {
      this.unrecorded.splice(0, over);
      this.throttled('error', 'dropped', `budget alerts waiting for the database exceed ${this.maxUnrecorded}: the oldest are dropped`);
    }
  }

  /** Records the alerts; the rows returned are those this call made, leased to this instance for their first attempt when `claim`. */
  private insert(candidates: AlertCandidate[], claim: boolean): Promise<BudgetAlertView[]> {
    const now = this.clock.now();
    const sent = this.sender !== null;
    return this.store.insert(candidates, { delivery: sent ? 'pending' : 'disabled', nextAttemptAt: sent ? now : null, claimedUntil: claim ? now + this.leaseMs : null });
  }

  /** Runs a sweep now, or right after the one under way. */
  private kick(): void {
    if (this.closed) return;
    if (this.sweeping) {
      this.sweepAgain = true;
      return;
    }
    this.sweeping = this.sweep()
      .catch((err) => this.throttled('error', 'sweep', 'budget alerts: sweep failed; tried again at the next', { err: String(err) }))
      .finally(() => {
        this.sweeping = null;
        if (this.sweepAgain) {
          this.sweepAgain = false;
          this.kick();
        }
      });
  }

  private async sweep(): Promise<void> {
    if (this.unrecorded.length) {
      const batch = this.unrecorded.splice(0, 500);
      try {
        const rows = await this.insert(batch, false);
        if (!this.unrecorded.length) this.log.warn(`budget alerts: the database is back, waiting alert(s) recorded`);
        if (this.sender && rows.length) this.sweepAgain = true;
      } catch (err) {
        this.unrecorded.unshift(...batch);
        throw err;
      }
    }
    if (!this.sender || this.closed) return;
    const room = this.maxConcurrent - this.inFlight.size;
    if (room <= 0) return;
    const now = this.clock.now();
    const rows = await this.store.claimDue(now, now + this.leaseMs, room);
    for (const r of rows) this.deliver(r);
    // A full batch: there may be more due.
    if (rows.length === room) this.sweepAgain = true;
  }

  /** One attempt at an alert this instance holds the lease of, and its outcome recorded. */
  private deliver(alert: BudgetAlertView): void {
    const controller = new AbortController();
    const p = this.sender!.send(alert, controller.signal)
      .then((outcome) => this.settle(alert, outcome))
      .catch((err) => this.throttled('error', 'settle', 'budget alert: delivery outcome not recorded; retried once its lease ends', { id: alert.id, err: String(err) }))
      .finally(() => {
        this.inFlight.delete(p);
        // Room for what the sweep left.
        if (!this.closed && this.inFlight.size === this.maxConcurrent - 1) this.kick();
      });
    this.inFlight.set(p, controller);
  }

  private async settle(alert: BudgetAlertView, outcome: DeliveryOutcome): Promise<void> {
    const now = this.clock.now();
    if ('aborted' in outcome) {
      await this.store.release(alert.id);
      return;
    }
    const attempts = alert.attempts + 1;
    if (outcome.ok) {
      await this.store.delivered(alert.id, attempts, now);
      return;
    }
    const host = this.sender!.webhook.host;
    if (attempts >= this.config.max_attempts) {
      await this.store.failed(alert.id, attempts, outcome.error);
      this.log.error(`budget alert ${alert.id} not delivered to ${host} after ${attempts} attempt(s): ${outcome.error}; given up`, { id: alert.id, host, attempts, last_error: outcome.error });
      return;
    }
    const delay = Math.min(this.backoffMs * 2 ** (attempts - 1), this.maxBackoffMs);
    await this.store.retryAt(alert.id, attempts, outcome.error, now + delay);
    this.throttled('warn', 'attempt', `budget alert delivery to ${host} failed (${outcome.error}); retried with backoff`, { id: alert.id, host, attempts, retry_in_ms: delay });
    this.wakeAt(now + delay);
  }

  /** A sweep at `at` (this instance's own retries come due on time, not at the next periodic sweep). */
  private wakeAt(at: number): void {
    if (this.closed || (this.wake && this.wake.at <= at)) return;
    if (this.wake) clearTimeout(this.wake.timer);
    const timer = setTimeout(() => {
      this.wake = null;
      this.kick();
    }, Math.max(0, at - this.clock.now()) + 5);
    timer.unref();
    this.wake = { timer, at };
  }

  /** Logs `kind` at most once a minute: an outage or a dead receiver must not flood the log. */
  private throttled(level: 'warn' | 'error', kind: string, msg: string, extra?: Record<string, unknown>): void {
    const now = Date.now();
    if (now - (this.lastLogged.get(kind) ?? -Infinity) < 60_000) return;
    this.lastLogged.set(kind, now);
    this.log[level](msg, extra);
  }
}
