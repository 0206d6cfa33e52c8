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
import { nanoToUsd } from './prices.ts';
import type { z } from 'zod';
import type { BudgetAlert } from '../../contract/usage.ts';
import { createHmac } from 'node:crypto';
import { Agent, request } from 'undici';
import type { ResolvedConfig } from '../config/schema.ts';
import type { SqlQueryable } from '../db/migrate.ts';
import { systemClock, type Clock } from '../runtime/clock.ts';
import { constantTimeEqualHex, newId } from '../runtime/secrets.ts';
import { within } from '../runtime/within.ts';
import { isUtcDay } from './plans.ts';

export type BudgetScope = 'key' | 'user';
export type BudgetPeriod = 'daily' | 'monthly';
export type BudgetAlertDelivery = 'pending' | 'delivered' | 'failed' | 'disabled';

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

/** An alert as the usage reports and the dashboard show it (JSON-ready; amounts as decimal strings). */
/** An alert as the usage reports show it (the contract's shape). */
export type BudgetAlertView = z.infer<typeof BudgetAlert>;

export type BudgetAlertFilter = {
  /** Alerts of this user (both scopes). */
  userId?: string;
  /** Alerts whose key_id is one of these (an empty list matches nothing). */
  keyIds?: string[];
  scope?: BudgetScope;
  /** ISO 8601 time or YYYY-MM-DD: alerts created at or after it. */
  since?: string;
  /** At most this many, newest first (default 100, at most 1000). */
  limit?: number;
};

/** What the webhook receives (the JSON body, byte for byte the same at every attempt). */
export type BudgetAlertPayload = {
  type: 'budget.threshold_crossed';
  id: string;
  scope: BudgetScope;
  user_id: string;
  key_id: string | null;
  period: BudgetPeriod;
  period_start: string;
  threshold_percent: number;
  limit_usd: string;
  spent_usd: string;
  created_at: string;
};

export const BUDGET_ALERT_EVENT = 'budget.threshold_crossed';

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

/** The thresholds (percent) that `before → after` crossed: before < t% × limit ≤ after, exactly. */
export function crossedThresholds(thresholds: readonly number[], limitNano: number, beforeNano: number, afterNano: number): number[] {
  if (![limitNano, beforeNano, afterNano].every(Number.isFinite) || limitNano <= 0 || afterNano <= beforeNano) return [];
  // Runs at every settlement: a threshold clearly outside (before, after] is told apart in floating
  // point; only one near it (a crossing, or a near miss) is decided exactly, in integers.
  const above = afterNano * 100 * (1 + 1e-9);
  const below = beforeNano * 100 * (1 - 1e-9);
  let exact: { limit: bigint; before: bigint; after: bigint } | undefined;
  return thresholds.filter((t) => {
    const x = limitNano * t;
    if (x > above || x < below) return false;
    exact ??= { limit: BigInt(Math.round(limitNano)), before: BigInt(Math.round(beforeNano)) * 100n, after: BigInt(Math.round(afterNano)) * 100n };
    const at = exact.limit * BigInt(t);
    return exact.before < at && at <= exact.after;
  });
}

/** `X-Gateway-Signature`: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`. */
export function signBudgetAlert(secret: string, body: string, unixSeconds: number): string {
  const t = Math.floor(unixSeconds);
  return `t=${t},v1=${signatureOf(secret, t, body)}`;
}

const signatureOf = (secret: string, t: number, body: string) => createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');

/**
 * What a receiver does with `X-Gateway-Signature` (docs/billing.md): recompute the HMAC over
 * "<t>.<raw body>" with the shared secret, compare in constant time, and refuse a `t` too far from
 * its own clock (a replayed delivery).
 */
export function verifyBudgetAlertSignature(secret: string, header: string | undefined, rawBody: string, nowSeconds = Date.now() / 1000, toleranceSeconds = 300): boolean {
  if (!header) return false;
  const parts = header.split(',').map((p) => p.trim().split('='));
  const t = Number(parts.find(([k]) => k === 't')?.[1]);
  if (!Number.isInteger(t) || Math.abs(nowSeconds - t) > toleranceSeconds) return false;
  const expected = signatureOf(secret, t, rawBody);
  return parts.some(([k, v]) => k === 'v1' && v !== undefined && /^[0-9a-f]+$/i.test(v) && constantTimeEqualHex(v, expected));
}

/** An alert about to be recorded (a row of the INSERT). */
type Candidate = {
  id: string;
  scope: BudgetScope;
  ownerId: string;
  userId: string;
  keyId: string | null;
  period: BudgetPeriod;
  periodStart: string;
  threshold: number;
  limitNano: string;
  spentNano: string;
  createdAt: string;
};

/** A row as read back: the view plus what delivery needs. */
type AlertRow = BudgetAlertView;

const isoOf = (column: string) => `to_char(${column}, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
/** The columns every read and RETURNING gives, the same on PostgreSQL and the embedded database. */
const COLUMNS = `id, scope, key_id, user_id, period, period_start, threshold_percent,
  limit_nano::text AS limit_nano, spent_nano::text AS spent_nano, ${isoOf('created_at')} AS created_at,
  delivery, attempts, ${isoOf('delivered_at')} AS delivered_at`;

function viewOf(r: Record<string, unknown>): AlertRow {
  return {
    id: String(r.id),
    scope: String(r.scope) as BudgetScope,
    key_id: r.key_id === null || r.key_id === undefined ? null : String(r.key_id),
    user_id: String(r.user_id),
    period: String(r.period) as BudgetPeriod,
    period_start: String(r.period_start),
    threshold_percent: Number(r.threshold_percent),
    limit_usd: nanoToUsd(String(r.limit_nano)),
    spent_usd: nanoToUsd(String(r.spent_nano)),
    created_at: String(r.created_at),
    delivery: String(r.delivery) as BudgetAlertDelivery,
    attempts: Number(r.attempts),
    delivered_at: r.delivered_at === null || r.delivered_at === undefined ? null : String(r.delivered_at),
  };
}

/** The webhook's JSON body for an alert: built from its row, so every attempt (on any instance) sends the same bytes. */
export function budgetAlertPayload(a: BudgetAlertView): BudgetAlertPayload {
  return {
    type: BUDGET_ALERT_EVENT,
    id: a.id,
    scope: a.scope,
    user_id: a.user_id,
    key_id: a.key_id,
    period: a.period,
    period_start: a.period_start,
    threshold_percent: a.threshold_percent,
    limit_usd: a.limit_usd,
    spent_usd: a.spent_usd,
    created_at: a.created_at,
  };
}

const ts = (ms: number) => new Date(ms).toISOString();
const MONTH = /^\d{4}-(0[1-9]|1[0-2])$/;

/** Why an attempt failed, for last_error and the logs: a status, a time-out or an error code, never a message (it may quote the URL). */
function failureOf(err: unknown, timedOut: boolean, timeoutMs: number): string {
  if (timedOut) return `timeout after ${timeoutMs} ms`;
  const code = (e: unknown): string | undefined => {
    const c = (e as { code?: unknown } | null)?.code;
    return typeof c === 'string' && /^[A-Z0-9_]+$/.test(c) ? c : undefined;
  };
  const found = code(err) ?? code((err as { cause?: unknown } | null)?.cause);
  return found ? `network error: ${found}` : 'network error';
}

type Outcome = { ok: true } | { ok: false; error: string } | { aborted: true };

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
  private readonly webhook: { url: string; host: string; secret: string } | null;
  private readonly agent: Agent | null;
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
  private unrecorded: Candidate[] = [];
  private readonly lastLogged = new Map<string, number>();

  constructor(
    private readonly sql: Pick<SqlQueryable, 'query'>,
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
    const url = config.webhook_url;
    this.webhook = url && config.secret ? { url, host: new URL(url).host, secret: config.secret } : null;
    this.agent = this.webhook ? new Agent({ connect: { timeout: this.timeoutMs }, keepAliveTimeout: 10_000, headersTimeout: 0, bodyTimeout: 0 }) : null;
  }

  /** The webhook's host (for start-up messages), or null when alerts are only recorded. */
  get webhookHost(): string | null {
    return this.webhook?.host ?? null;
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
      const createdAt = ts(c.at);
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
  async list(filter: BudgetAlertFilter = {}): Promise<BudgetAlertView[]> {
    const where: string[] = [];
    const params: unknown[] = [];
    const add = (clause: (p: string) => string, value: unknown) => {
      params.push(value);
      where.push(clause(`$${params.length}`));
    };
    if (filter.userId !== undefined) add((p) => `user_id = ${p}`, filter.userId);
    if (filter.keyIds !== undefined) {
      if (!filter.keyIds.length) return [];
      add((p) => `key_id = ANY(${p}::text[])`, filter.keyIds);
    }
    if (filter.scope !== undefined) add((p) => `scope = ${p}`, filter.scope);
    if (filter.since !== undefined) {
      const since = Date.parse(filter.since);
      if (Number.isNaN(since)) throw new TypeError(`since: not a date or time: ${filter.since}`);
      add((p) => `created_at >= ${p}::timestamp`, ts(since));
    }
    const limit = Math.min(Math.max(Math.floor(filter.limit ?? 100), 1), 1000);
    const rows = await this.sql.query(
      `SELECT ${COLUMNS} FROM budget_alerts ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at DESC, id DESC LIMIT ${limit}`,
      params,
    );
    return rows.map(viewOf);
  }

  /** Starts the periodic sweep (due retries, alerts the database did not take yet). */
  start(): void {
    if (this.closed || this.interval) return;
    this.interval = setInterval(() => this.kick(), this.sweepMs);
    this.interval.unref();
    if (this.webhook) this.kick();
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
    await this.agent?.close().catch(() => {});
  }

  /** Inserts the alerts; those this insert made (not another instance's) are sent. */
  private record(candidates: Candidate[]): void {
    const claim = !!this.webhook && !this.closed && this.inFlight.size < this.maxConcurrent;
    const p = this.insert(candidates, claim)
      .then((rows) => {
        if (claim) for (const row of rows) this.deliver(row);
        else if (this.webhook && rows.length) this.kick();
      })
      .catch((err) => this.keepUnrecorded(candidates, err))
      .finally(() => this.recording.delete(p));
    this.recording.add(p);
  }

  private keepUnrecorded(candidates: Candidate[], err: unknown): void {
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

  /**
   * INSERT … ON CONFLICT DO NOTHING: the rows returned are those this statement made, claimed
   * (leased to this instance for the first attempt) when `claim`.
   */
  private async insert(candidates: Candidate[], claim: boolean): Promise<AlertRow[]> {
    const now = this.clock.now();
    const shared = [this.webhook ? 'pending' : 'disabled', this.webhook ? ts(now) : null, claim ? ts(now + this.leaseMs) : null];
    const params: unknown[] = [...shared];
    const values = candidates
      .slice()
      .sort((a, b) => a.threshold - b.threshold)
      .map((c) => {
        const fields = [c.id, c.scope, c.ownerId, c.userId, c.keyId, c.period, c.periodStart, c.threshold, c.limitNano, c.spentNano, c.createdAt];
        const types = ['text', 'text', 'text', 'text', 'text', 'text', 'text', 'integer', 'bigint', 'bigint', 'timestamp'];
        const refs = fields.map((v, j) => {
          params.push(v);
          return `$${params.length}::${types[j]}`;
        });
        return `(${refs.join(', ')}, $1::text, 0, $2::timestamp, $3::timestamp)`;
      });
    const rows = await this.sql.query(
      `INSERT INTO budget_alerts (id, scope, owner_id, user_id, key_id, period, period_start, threshold_percent, limit_nano, spent_nano, created_at, delivery, attempts, next_attempt_at, claimed_until)
       VALUES ${values.join(', ')}
       ON CONFLICT (scope, owner_id, period, period_start, threshold_percent) DO NOTHING
       RETURNING ${COLUMNS}`,
      params,
    );
    return rows.map(viewOf);
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
        if (this.webhook && rows.length) this.sweepAgain = true;
      } catch (err) {
        this.unrecorded.unshift(...batch);
        throw err;
      }
    }
    if (!this.webhook || this.closed) return;
    const room = this.maxConcurrent - this.inFlight.size;
    if (room <= 0) return;
    const now = this.clock.now();
    const rows = await this.sql.query(
      `UPDATE budget_alerts SET claimed_until = $2::timestamp
       WHERE id IN (
         SELECT id FROM budget_alerts
         WHERE delivery = 'pending' AND next_attempt_at <= $1::timestamp AND (claimed_until IS NULL OR claimed_until <= $1::timestamp)
         ORDER BY next_attempt_at LIMIT ${room}
         FOR UPDATE SKIP LOCKED)
       RETURNING ${COLUMNS}`,
      [ts(now), ts(now + this.leaseMs)],
    );
    for (const r of rows) this.deliver(viewOf(r));
    // A full batch: there may be more due.
    if (rows.length === room) this.sweepAgain = true;
  }

  /** One attempt at an alert this instance holds the lease of, and its outcome recorded. */
  private deliver(alert: AlertRow): void {
    const controller = new AbortController();
    const p = this.attempt(alert, controller.signal)
      .then((outcome) => this.settle(alert, outcome))
      .catch((err) => this.throttled('error', 'settle', 'budget alert: delivery outcome not recorded; retried once its lease ends', { id: alert.id, err: String(err) }))
      .finally(() => {
        this.inFlight.delete(p);
        // Room for what the sweep left.
        if (!this.closed && this.inFlight.size === this.maxConcurrent - 1) this.kick();
      });
    this.inFlight.set(p, controller);
  }

  private async attempt(alert: AlertRow, closing: AbortSignal): Promise<Outcome> {
    const webhook = this.webhook!;
    const body = JSON.stringify(budgetAlertPayload(alert));
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, this.timeoutMs);
    const onClose = () => controller.abort();
    closing.addEventListener('abort', onClose, { once: true });
    try {
      const res = await request(webhook.url, {
        method: 'POST',
        dispatcher: this.agent!,
        signal: controller.signal,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'model-gateway (budget alerts)',
          'x-gateway-event': BUDGET_ALERT_EVENT,
          'x-gateway-delivery': alert.id,
          // The wire's time, not the (test-replaceable) clock of the limits: receivers check it against theirs.
          'x-gateway-signature': signBudgetAlert(webhook.secret, body, Date.now() / 1000),
        },
        body,
      });
      await res.body.dump().catch(() => {});
      return res.statusCode >= 200 && res.statusCode < 300 ? { ok: true } : { ok: false, error: `HTTP ${res.statusCode}` };
    } catch (err) {
      if (closing.aborted && !timedOut) return { aborted: true };
      return { ok: false, error: failureOf(err, timedOut, this.timeoutMs) };
    } finally {
      clearTimeout(timer);
      closing.removeEventListener('abort', onClose);
    }
  }

  private async settle(alert: AlertRow, outcome: Outcome): Promise<void> {
    const now = this.clock.now();
    if ('aborted' in outcome) {
      // Shutting down mid-attempt: not counted, and due at once for whichever instance sweeps next.
      await this.sql.query(`UPDATE budget_alerts SET claimed_until = NULL WHERE id = $1 AND delivery = 'pending'`, [alert.id]);
      return;
    }
    const attempts = alert.attempts + 1;
    if (outcome.ok) {
      await this.sql.query(
        `UPDATE budget_alerts SET delivery = 'delivered', attempts = $2, delivered_at = $3::timestamp, next_attempt_at = NULL, claimed_until = NULL, last_error = NULL
         WHERE id = $1 AND delivery = 'pending'`,
        [alert.id, attempts, ts(now)],
      );
      return;
    }
    const host = this.webhook!.host;
    if (attempts >= this.config.max_attempts) {
      await this.sql.query(
        `UPDATE budget_alerts SET delivery = 'failed', attempts = $2, last_error = $3, next_attempt_at = NULL, claimed_until = NULL WHERE id = $1 AND delivery = 'pending'`,
        [alert.id, attempts, outcome.error],
      );
      this.log.error(`budget alert ${alert.id} not delivered to ${host} after ${attempts} attempt(s): ${outcome.error}; given up`, { id: alert.id, host, attempts, last_error: outcome.error });
      return;
    }
    const delay = Math.min(this.backoffMs * 2 ** (attempts - 1), this.maxBackoffMs);
    await this.sql.query(
      `UPDATE budget_alerts SET attempts = $2, last_error = $3, next_attempt_at = $4::timestamp, claimed_until = NULL WHERE id = $1 AND delivery = 'pending'`,
      [alert.id, attempts, outcome.error, ts(now + delay)],
    );
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
