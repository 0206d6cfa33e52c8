// GET /admin/v1/usage: the ledger across every user — top users and models, per-day totals.
import type { z } from 'zod';
import type { AdminUsageQuery, AdminUsageReport } from '../../contract/dashboard.ts';
import { errors } from '../runtime/errors.ts';
import type { Database } from '../db/client.ts';
import type { Clock } from '../runtime/clock.ts';
import type { UsageLedger } from './ledger.ts';
import { utcDay } from './plans.ts';
import { period } from './usage-report.ts';

/** What the operators' usage report reads. */
export type AdminUsageDeps = { db: Database; clock: Clock; ledger: Pick<UsageLedger, 'flush' | 'databaseUnavailable'> };

type Report = z.infer<typeof AdminUsageReport>;
const DAY = 86_400_000;
type Sums = { requests: number; errors: number; prompt: bigint; completion: bigint; cached: bigint; reasoning: bigint; billed: bigint };
const counted = (r: Pick<Sums, 'requests' | 'errors' | 'billed'>) => ({ requests: r.requests, errors: r.errors, billed_tokens: Number(r.billed ?? 0n) });

export async function adminUsageReport(services: AdminUsageDeps, query: z.infer<typeof AdminUsageQuery>): Promise<Report> {
  const { start, end } = period(query, services.clock.now());
  await services.ledger.flush();
  if (services.ledger.databaseUnavailable) throw errors.databaseUnavailable();
  // The day aggregates (usage-aggregates.ts), by their index on day.
  const sql = services.db.prisma;
  const [[all], users, models, days] = await Promise.all([
    sql.$queryRaw<Sums[]>`
      SELECT coalesce(sum(requests), 0)::int AS requests, coalesce(sum(errors), 0)::int AS errors, coalesce(sum(prompt_tokens), 0)::bigint AS prompt,
             coalesce(sum(completion_tokens), 0)::bigint AS completion, coalesce(sum(cached_tokens), 0)::bigint AS cached,
             coalesce(sum(reasoning_tokens), 0)::bigint AS reasoning, coalesce(sum(billed_tokens), 0)::bigint AS billed
      FROM usage_daily WHERE day >= ${start}::date AND day <= ${end}::date`,
    sql.$queryRaw<(Sums & { user_id: string; email: string | null })[]>`
      SELECT d.user_id, u.email, d.requests, d.errors, d.billed
      FROM (SELECT user_id, sum(requests)::int AS requests, sum(errors)::int AS errors, sum(billed_tokens)::bigint AS billed
            FROM usage_daily WHERE day >= ${start}::date AND day <= ${end}::date
            GROUP BY user_id ORDER BY billed DESC, requests DESC, user_id LIMIT ${query.limit}) d
      LEFT JOIN users u ON u.id = d.user_id
      ORDER BY d.billed DESC, d.requests DESC, d.user_id`,
    sql.$queryRaw<(Sums & { model: string })[]>`
      SELECT model, sum(requests)::int AS requests, sum(errors)::int AS errors, sum(billed_tokens)::bigint AS billed
      FROM usage_daily WHERE day >= ${start}::date AND day <= ${end}::date
      GROUP BY model ORDER BY billed DESC, requests DESC, model LIMIT ${query.limit}`,
    sql.$queryRaw<(Sums & { day: string; users: number })[]>`
      SELECT to_char(day, 'YYYY-MM-DD') AS day, sum(requests)::int AS requests, sum(errors)::int AS errors,
             sum(billed_tokens)::bigint AS billed, count(DISTINCT user_id)::int AS users
      FROM usage_daily WHERE day >= ${start}::date AND day <= ${end}::date GROUP BY 1`,
  ]);
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
    totals: {
      requests: all!.requests,
      errors: all!.errors,
      prompt_tokens: Number(all!.prompt),
      completion_tokens: Number(all!.completion),
      cached_tokens: Number(all!.cached),
      reasoning_tokens: Number(all!.reasoning),
      billed_tokens: Number(all!.billed),
    },
    top_users: users.map((u) => ({ user_id: u.user_id, email: u.email, ...counted(u) })),
    top_models: models.map((m) => ({ model: m.model, ...counted(m) })),
    by_day: byDay,
  };
}
