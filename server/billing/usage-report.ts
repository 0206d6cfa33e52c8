// GET /v1/usage: the key's plan, live counters with exact reset times, and a breakdown from the ledger.
import type { z } from 'zod';
import type { UsageQuery, UsageReport } from '../../contract/usage.ts';
import type { Principal } from '../auth/principal.ts';
import { errors } from '../http/errors.ts';
import type { Services } from '../services.ts';
import type { MeteredUnit } from './rules.ts';
import { jobsKey, nextUtcMidnight, planOf, quotaKey, rpmKey, utcDay } from './plans.ts';

type Report = z.infer<typeof UsageReport>;
type Totals = Report['totals'];
const DAY = 86_400_000;
const zero = (): Totals => ({ requests: 0, prompt_tokens: 0, completion_tokens: 0, cached_tokens: 0, reasoning_tokens: 0, billed_tokens: 0 });

function period(q: z.infer<typeof UsageQuery>, now: number): { start: string; end: string } {
  const calendarDate = (name: 'start' | 'end', v: string) => {
    if (Number.isNaN(Date.parse(v)) || utcDay(Date.parse(v)) !== v) throw errors.invalid(`'${name}' is not a calendar date.`, name);
    return v;
  };
  // `end` first: the default `start` is computed from it.
  const end = q.end === undefined ? utcDay(now) : calendarDate('end', q.end);
  const start = q.start === undefined ? utcDay(Date.parse(end) - 6 * DAY) : calendarDate('start', q.start);
  if (start > end) throw errors.invalid("'start' is after 'end'.", 'start');
  if ((Date.parse(end) - Date.parse(start)) / DAY > 366) throw errors.invalid('The period can span at most 366 days.', 'start');
  return { start, end };
}

export async function usageReport(services: Services, principal: Principal, query: z.infer<typeof UsageQuery>): Promise<Report> {
  const now = services.clock.now();
  const plan = planOf(services.config, principal.planId);
  const { start, end } = period(query, now);
  const [rpm, quota, jobs] = await Promise.all([
    services.counters.peekWindow(rpmKey(principal.keyId), now),
    services.counters.reserved(quotaKey(principal.keyId, now), now),
    services.counters.reserved(jobsKey(principal.keyId), now),
  ]);
  // This instance's pending records first, so the breakdown includes the latest requests. A flush
  // that just failed for want of the database says the report cannot be made: 503 now rather
  // than another timeout on the queries below.
  await services.ledger.flush();
  if (services.ledger.databaseUnavailable) throw errors.databaseUnavailable();
  const where = { apiKeyId: principal.keyId, createdAt: { gte: new Date(`${start}T00:00:00Z`), lt: new Date(Date.parse(end) + DAY) } };
  const sums = { promptTokens: true, completionTokens: true, cachedTokens: true, reasoningTokens: true, billedTokens: true } as const;
  const rows = await services.db.prisma.usageRecord.groupBy({ by: ['model'], where, _sum: sums, _count: { _all: true }, orderBy: { model: 'asc' } });
  const units = await services.db.prisma.usageRecord.groupBy({ by: ['model', 'meteredUnit'], where: { ...where, meteredUnit: { not: null } }, _sum: { meteredQuantity: true } });
  const meteredOf = new Map(units.map((u) => [u.model, { unit: u.meteredUnit as MeteredUnit, quantity: u._sum.meteredQuantity ?? 0 }]));
  const days = await services.db.prisma.$queryRaw<{ day: string; requests: number; prompt: bigint; completion: bigint; cached: bigint; reasoning: bigint; billed: bigint }[]>`
    SELECT to_char(date_trunc('day', created_at), 'YYYY-MM-DD') AS day, count(*)::int AS requests,
           sum(prompt_tokens)::bigint AS prompt, sum(completion_tokens)::bigint AS completion, sum(cached_tokens)::bigint AS cached,
           sum(reasoning_tokens)::bigint AS reasoning, sum(billed_tokens)::bigint AS billed
    FROM usage_records WHERE api_key_id = ${principal.keyId} AND created_at >= ${where.createdAt.gte} AND created_at < ${where.createdAt.lt}
    GROUP BY 1 ORDER BY 1`;

  const totals = zero();
  const byModel = rows.map((r) => {
    const t: Totals = {
      requests: r._count._all,
      prompt_tokens: r._sum.promptTokens ?? 0,
      completion_tokens: r._sum.completionTokens ?? 0,
      cached_tokens: r._sum.cachedTokens ?? 0,
      reasoning_tokens: r._sum.reasoningTokens ?? 0,
      billed_tokens: Number(r._sum.billedTokens ?? 0n),
    };
    for (const k of Object.keys(totals) as (keyof Totals)[]) totals[k] += t[k];
    return { model: r.model, ...t, metered: meteredOf.get(r.model) ?? null };
  });
  const perDay = new Map(days.map((d) => [d.day, d]));
  const byDay: Report['by_day'] = [];
  for (let d = Date.parse(start); d <= Date.parse(end); d += DAY) {
    const day = utcDay(d);
    const r = perDay.get(day);
    byDay.push({
      date: day,
      ...(r
        ? { requests: r.requests, prompt_tokens: Number(r.prompt), completion_tokens: Number(r.completion), cached_tokens: Number(r.cached), reasoning_tokens: Number(r.reasoning), billed_tokens: Number(r.billed) }
        : zero()),
    });
  }
  const usedTokens = quota.settled + quota.reserved;
  const rpmUsed = rpm?.value ?? 0;
  return {
    object: 'usage',
    plan: { id: plan.id, rank: plan.rank, daily_tokens: plan.daily_tokens, requests_per_minute: plan.requests_per_minute, max_concurrent_jobs: plan.max_concurrent_jobs },
    limits: {
      daily_tokens: { limit: plan.daily_tokens, used: usedTokens, remaining: Math.max(0, plan.daily_tokens - usedTokens), reset_at: new Date(nextUtcMidnight(now)).toISOString() },
      requests_per_minute: {
        limit: plan.requests_per_minute,
        used: rpmUsed,
        remaining: Math.max(0, plan.requests_per_minute - rpmUsed),
        // No open window: the next request starts one that ends a minute later.
        reset_at: new Date(rpm?.resetAt ?? now + 60_000).toISOString(),
      },
      concurrent_jobs: { limit: plan.max_concurrent_jobs, active: jobs.holders, remaining: Math.max(0, plan.max_concurrent_jobs - jobs.holders) },
    },
    period: { start, end },
    totals,
    by_model: byModel,
    by_day: byDay,
  };
}
