// GET /admin/v1/usage: the ledger across every user — top users and models, per-day totals.
import type { z } from 'zod';
import type { AdminUsageQuery, AdminUsageReport } from '../../contract/dashboard.ts';
import { errors } from '../runtime/errors.ts';
import type { Database } from '../db/client.ts';
import type { Clock } from '../runtime/clock.ts';
import type { UsageLedger } from './ledger.ts';
import { utcDay } from './plans.ts';
import { addTotals, period, totalsOf, zeroTotals, type SummedRow } from './usage-report.ts';

/** What the operators' usage report reads. */
export type AdminUsageDeps = { db: Database; clock: Clock; ledger: Pick<UsageLedger, 'flush' | 'databaseUnavailable'> };

type Report = z.infer<typeof AdminUsageReport>;
const DAY = 86_400_000;
const counted = (r: Pick<SummedRow, 'requests' | 'errors' | 'billed'>) => ({ requests: r.requests, errors: r.errors, billed_tokens: Number(r.billed ?? 0n) });

export async function adminUsageReport(services: AdminUsageDeps, query: z.infer<typeof AdminUsageQuery>): Promise<Report> {
  const { start, end } = period(query, services.clock.now());
  await services.ledger.flush();
  if (services.ledger.databaseUnavailable) throw errors.databaseUnavailable();
  // The day aggregates (usage-aggregates.ts), by their index on day.
  const sql = services.db.prisma;
  const [users, models, days] = await Promise.all([
    sql.$queryRaw<(SummedRow & { user_id: string; email: string | null })[]>`
      SELECT d.user_id, u.email, d.requests, d.errors, d.billed
      FROM (SELECT user_id, sum(requests)::int AS requests, sum(errors)::int AS errors, sum(billed_tokens)::bigint AS billed
            FROM usage_daily WHERE day >= ${start}::date AND day <= ${end}::date
            GROUP BY user_id ORDER BY billed DESC, requests DESC, user_id LIMIT ${query.limit}) d
      LEFT JOIN users u ON u.id = d.user_id
      ORDER BY d.billed DESC, d.requests DESC, d.user_id`,
    sql.$queryRaw<(SummedRow & { model: string })[]>`
      SELECT model, sum(requests)::int AS requests, sum(errors)::int AS errors, sum(billed_tokens)::bigint AS billed
      FROM usage_daily WHERE day >= ${start}::date AND day <= ${end}::date
      GROUP BY model ORDER BY billed DESC, requests DESC, model LIMIT ${query.limit}`,
    // Per day and user first, then per day: hashing beats count(DISTINCT)'s sort (35 against 70 ms
    // over 90 days of 1,000 keys). The period's totals are these days' sums.
    sql.$queryRaw<(SummedRow & { day: string; users: number })[]>`
      SELECT to_char(day, 'YYYY-MM-DD') AS day, sum(requests)::int AS requests, sum(errors)::int AS errors, sum(prompt)::bigint AS prompt,
             sum(completion)::bigint AS completion, sum(cached)::bigint AS cached, sum(reasoning)::bigint AS reasoning,
             sum(billed)::bigint AS billed, count(*)::int AS users
      FROM (SELECT day, user_id, sum(requests) AS requests, sum(errors) AS errors, sum(prompt_tokens) AS prompt, sum(completion_tokens) AS completion,
                   sum(cached_tokens) AS cached, sum(reasoning_tokens) AS reasoning, sum(billed_tokens) AS billed
            FROM usage_daily WHERE day >= ${start}::date AND day <= ${end}::date GROUP BY day, user_id) per_user
      GROUP BY day`,
  ]);
  const totals = zeroTotals();
  for (const d of days) addTotals(totals, totalsOf(d));
  const perDay = new Map(days.map((d) => [d.day, d]));
  const byDay: Report['by_day'] = [];
  for (let d = Date.parse(start); d <= Date.parse(end); d += DAY) {
    const date = utcDay(d);
    const r = perDay.get(date);
    byDay.push({ date, ...(r ? counted(r) : { requests: 0, errors: 0, billed_tokens: 0 }), users: r?.users ?? 0 });
  }
  return {
    object: 'admin.usage',
    period: { start, end },
    totals,
    top_users: users.map((u) => ({ user_id: u.user_id, email: u.email, ...counted(u) })),
    top_models: models.map((m) => ({ model: m.model, ...counted(m) })),
    by_day: byDay,
  };
}
