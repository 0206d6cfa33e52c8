// GET /admin/v1/usage: the ledger across every user — top users and models, per-day totals.
import type { z } from 'zod';
import type { AdminUsageQuery, AdminUsageReport } from '../../contract/dashboard.ts';
import { errors } from '../runtime/errors.ts';
import type { Database } from '../db/client.ts';
import type { Clock } from '../runtime/clock.ts';
import type { UsageLedger } from './ledger.ts';
import type { BudgetAlerts } from './budget-alerts.ts';
import { utcDay } from './plans.ts';
import { addSums, period, reported, SUMS, sumsOf, zeroSums, type SummedRow } from './usage-report.ts';
import { money, usdText } from './prices.ts';

/** What the operators' usage report reads. */
export type AdminUsageDeps = { db: Database; clock: Clock; ledger: Pick<UsageLedger, 'flush' | 'databaseUnavailable'>; budgetAlerts: Pick<BudgetAlerts, 'list'> };

type Report = z.infer<typeof AdminUsageReport>;
const DAY = 86_400_000;
/** What the top lists and the days show of a group: fewer sums than the totals (each one costs a pass). */
const COUNTED = 'sum(requests)::float8 AS requests, sum(errors)::float8 AS errors, sum(billed_tokens)::float8 AS billed_tokens, sum(unpriced_requests)::float8 AS unpriced_requests, sum(cost)::text AS cost';
type CountedRow = Pick<SummedRow, 'requests' | 'errors' | 'billed_tokens' | 'unpriced_requests' | 'cost'>;

/** A row's requests, errors, billed tokens and cost, as the report lists them (cost as the totals report it). */
const counted = (r: CountedRow) => ({
  requests: r.requests,
  errors: r.errors,
  billed_tokens: r.billed_tokens,
  cost: r.requests > 0 && r.unpriced_requests === r.requests ? null : usdText(money(r.cost ?? '0')),
  unpriced_requests: r.unpriced_requests,
});

export async function adminUsageReport(services: AdminUsageDeps, query: z.infer<typeof AdminUsageQuery>): Promise<Report> {
  const { start, end } = period(query, services.clock.now());
  await services.ledger.flush();
  if (services.ledger.databaseUnavailable) throw errors.databaseUnavailable();
  // The roll-ups of the day aggregates (usage-aggregates.ts): a row per day and model, and per day
  // and user, read by their primary key's leading day. Their size follows days × (models + users),
  // not keys; each of the five reads below is one pass over its table's period.
  const sql = services.db.prisma;
  const inPeriod = 'day >= $1::date AND day <= $2::date';
  const [users, models, days, usersPerDay, alerts] = await Promise.all([
    sql.$queryRawUnsafe<(CountedRow & { user_id: string; email: string | null })[]>(
      `SELECT d.*, u.email
       FROM (SELECT user_id, ${COUNTED} FROM usage_day_users WHERE ${inPeriod}
             GROUP BY user_id ORDER BY billed_tokens DESC, requests DESC, user_id LIMIT $3) d
       LEFT JOIN users u ON u.id = d.user_id
       ORDER BY d.billed_tokens DESC, d.requests DESC, d.user_id`,
      start,
      end,
      query.limit,
    ),
    sql.$queryRawUnsafe<(CountedRow & { model: string })[]>(
      `SELECT model, ${COUNTED} FROM usage_day_models WHERE ${inPeriod}
       GROUP BY model ORDER BY billed_tokens DESC, requests DESC, model LIMIT $3`,
      start,
      end,
      query.limit,
    ),
    // The days' sums; the period's totals are theirs.
    sql.$queryRawUnsafe<(SummedRow & { day: string })[]>(`SELECT to_char(day, 'YYYY-MM-DD') AS day, ${SUMS} FROM usage_day_models WHERE ${inPeriod} GROUP BY day`, start, end),
    // A user's row of a day exists once they made a request that day: distinct users are rows.
    sql.$queryRawUnsafe<{ day: string; users: number }[]>(
      `SELECT to_char(day, 'YYYY-MM-DD') AS day, count(*)::int AS users FROM usage_day_users WHERE ${inPeriod} GROUP BY day`,
      start,
      end,
    ),
    services.budgetAlerts.list({ limit: 50 }),
  ]);
  const totals = zeroSums();
  for (const d of days) addSums(totals, sumsOf(d));
  const perDay = new Map(days.map((d) => [d.day, d]));
  const usersOn = new Map(usersPerDay.map((d) => [d.day, d.users]));
  const byDay: Report['by_day'] = [];
  for (let d = Date.parse(start); d <= Date.parse(end); d += DAY) {
    const date = utcDay(d);
    const r = perDay.get(date);
    byDay.push({ date, ...counted(r ?? { requests: 0, errors: 0, billed_tokens: 0, unpriced_requests: 0, cost: null }), users: usersOn.get(date) ?? 0 });
  }
  return {
    object: 'admin.usage',
    period: { start, end },
    totals: reported(totals),
    top_users: users.map((u) => ({ user_id: u.user_id, email: u.email, ...counted(u) })),
    top_models: models.map((m) => ({ model: m.model, ...counted(m) })),
    budget_alerts: alerts,
    by_day: byDay,
  };
}
