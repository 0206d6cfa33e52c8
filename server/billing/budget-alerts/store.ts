// Where budget alerts live: the `budget_alerts` table, the same SQL on PostgreSQL and the embedded
// database. A unique index makes an alert one row per (scope, owner, period, period start,
// threshold) across instances; a lease (`claimed_until`, FOR UPDATE SKIP LOCKED) makes a delivery
// one instance's at a time. The orchestration (what to record, when to send, how long to wait)
// is budget-alerts.ts's.
import type { z } from 'zod';
import type { BudgetAlert } from '../../../contract/usage.ts';
import type { SqlQueryable } from '../../db/migrate.ts';
import { nanoToUsd } from '../prices.ts';

export type BudgetScope = 'key' | 'user';
export type BudgetPeriod = 'daily' | 'monthly';
export type BudgetAlertDelivery = 'pending' | 'delivered' | 'failed' | 'disabled';

/** An alert as the usage reports and the dashboard show it (the contract's shape; amounts as decimal strings). */
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

/** An alert about to be recorded (a row of the INSERT). */
export type AlertCandidate = {
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

export const isoTime = (ms: number) => new Date(ms).toISOString();

const isoOf = (column: string) => `to_char(${column}, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
/** The columns every read and RETURNING gives, the same on PostgreSQL and the embedded database. */
const COLUMNS = `id, scope, key_id, user_id, period, period_start, threshold_percent,
  limit_nano::text AS limit_nano, spent_nano::text AS spent_nano, ${isoOf('created_at')} AS created_at,
  delivery, attempts, ${isoOf('delivered_at')} AS delivered_at`;

function viewOf(r: Record<string, unknown>): BudgetAlertView {
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

/** How new rows start: sent by a webhook or only recorded; leased to this instance for the first attempt until `claimedUntil`. */
export type InsertMode = { delivery: 'pending' | 'disabled'; nextAttemptAt: number | null; claimedUntil: number | null };

export class BudgetAlertStore {
  constructor(private readonly sql: Pick<SqlQueryable, 'query'>) {}

  /** INSERT … ON CONFLICT DO NOTHING: the rows returned are those this statement made (not another instance's). */
  async insert(candidates: AlertCandidate[], mode: InsertMode): Promise<BudgetAlertView[]> {
    const shared = [mode.delivery, mode.nextAttemptAt === null ? null : isoTime(mode.nextAttemptAt), mode.claimedUntil === null ? null : isoTime(mode.claimedUntil)];
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
      add((p) => `created_at >= ${p}::timestamp`, isoTime(since));
    }
    const limit = Math.min(Math.max(Math.floor(filter.limit ?? 100), 1), 1000);
    const rows = await this.sql.query(
      `SELECT ${COLUMNS} FROM budget_alerts ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at DESC, id DESC LIMIT ${limit}`,
      params,
    );
    return rows.map(viewOf);
  }

  /** Up to `room` alerts due at `now` and not leased, leased to this instance until `leaseUntil`. */
  async claimDue(now: number, leaseUntil: number, room: number): Promise<BudgetAlertView[]> {
    const rows = await this.sql.query(
      `UPDATE budget_alerts SET claimed_until = $2::timestamp
       WHERE id IN (
         SELECT id FROM budget_alerts
         WHERE delivery = 'pending' AND next_attempt_at <= $1::timestamp AND (claimed_until IS NULL OR claimed_until <= $1::timestamp)
         ORDER BY next_attempt_at LIMIT ${Math.floor(room)}
         FOR UPDATE SKIP LOCKED)
       RETURNING ${COLUMNS}`,
      [isoTime(now), isoTime(leaseUntil)],
    );
    return rows.map(viewOf);
  }

  /** An attempt abandoned at shutdown: not counted, and due at once for whichever instance sweeps next. */
  async release(id: string): Promise<void> {
    await this.sql.query(`UPDATE budget_alerts SET claimed_until = NULL WHERE id = $1 AND delivery = 'pending'`, [id]);
  }

  async delivered(id: string, attempts: number, at: number): Promise<void> {
    await this.sql.query(
      `UPDATE budget_alerts SET delivery = 'delivered', attempts = $2, delivered_at = $3::timestamp, next_attempt_at = NULL, claimed_until = NULL, last_error = NULL
       WHERE id = $1 AND delivery = 'pending'`,
      [id, attempts, isoTime(at)],
    );
  }

  /** Given up: `error` is why the last attempt failed (a status, a time-out, an error code: never the URL). */
  async failed(id: string, attempts: number, error: string): Promise<void> {
    await this.sql.query(`UPDATE budget_alerts SET delivery = 'failed', attempts = $2, last_error = $3, next_attempt_at = NULL, claimed_until = NULL WHERE id = $1 AND delivery = 'pending'`, [
      id,
      attempts,
      error,
    ]);
  }

  /** Failed, tried again from `at` by whichever instance sweeps then. */
  async retryAt(id: string, attempts: number, error: string, at: number): Promise<void> {
    await this.sql.query(`UPDATE budget_alerts SET attempts = $2, last_error = $3, next_attempt_at = $4::timestamp, claimed_until = NULL WHERE id = $1 AND delivery = 'pending'`, [
      id,
      attempts,
      error,
      isoTime(at),
    ]);
  }
}
