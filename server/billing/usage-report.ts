// GET /v1/usage: the key's plan, live counters with exact reset times, and a breakdown from the ledger.
import type { z } from 'zod';
import type { UsageQuery, UsageReport } from '../../contract/usage.ts';
import { isSession, principalBudgets, type Principal, type PrincipalBudgets } from '../auth/principal.ts';
import { errors } from '../runtime/errors.ts';
import type { AccountService } from '../accounts/service.ts';
import type { Catalog } from '../catalog/catalog.ts';
import type { ResolvedConfig } from '../config/schema.ts';
import type { Database } from '../db/client.ts';
import type { Clock } from '../runtime/clock.ts';
import type { CounterStore } from '../stores/index.ts';
import type { UsageLedger } from './ledger.ts';
import { SUMMED_COUNTS } from './usage-aggregates.ts';
import type { BudgetAlerts } from './budget-alerts.ts';
import type { MeteredUnit } from '../config/billing-rules.ts';
import {
  budgetsFor,
  isUtcDay,
  jobsKey,
  keySpendKey,
  nextUtcMidnight,
  nextUtcMonth,
  planLimits,
  planOf,
  quotaKey,
  rankOf,
  rpmKey,
  userJobsKey,
  userQuotaKey,
  userRpmKey,
  userSpendKey,
  utcDay,
  utcMonth,
  type CounterOwner,
} from './plans.ts';
import { ZERO, money, nanoToUsd, usdText, usdToNano, type Money } from './prices.ts';

/** What the usage reads and the limits views read. */
export type UsageReportDeps = {
  config: ResolvedConfig;
  db: Database;
  clock: Clock;
  counters: CounterStore;
  ledger: Pick<UsageLedger, 'flush' | 'databaseUnavailable'>;
  accounts: Pick<AccountService, 'userKeys' | 'activeKeyCount'>;
  catalog: Pick<Catalog, 'entries'>;
  budgetAlerts: Pick<BudgetAlerts, 'list'>;
};

type Report = z.infer<typeof UsageReport>;
type Totals = Report['totals'];
const DAY = 86_400_000;

/** A report's counts: each sums the usage_daily column of its name. */
const COUNTS: readonly Exclude<keyof Totals, 'cost'>[] = ['requests', 'errors', ...SUMMED_COUNTS.map(([column]) => column), 'unpriced_requests'];
type Count = 'requests' | 'errors' | (typeof SUMMED_COUNTS)[number][0] | 'unpriced_requests';

/**
 * The select list of the sums over `usage_daily` rows (or over a subquery's columns of the same
 * names): each count as a float8 (exact below 2^53, and a number, not a BigInt, for the JSON) and
 * the cost as text (exact: a numeric sum).
 */
export const SUMS = [...COUNTS.map((name) => `sum(${name})::float8 AS ${name}`), 'sum(cost)::text AS cost'].join(', ');

/** One summed row: the counts and the cost. */
export type SummedRow = { [K in Count]: number } & { cost: string | null };

/** Totals being summed: the counts, and the cost kept as a decimal until it is reported. */
export type Sums = { [K in Count]: number } & { cost: Money };

export const zeroSums = (): Sums => ({ ...(Object.fromEntries(COUNTS.map((name) => [name, 0])) as { [K in Count]: number }), cost: ZERO });
export const sumsOf = (r: SummedRow): Sums => ({ ...r, cost: r.cost === null ? ZERO : money(r.cost) });
/** Adds `t` into `into`: the counts, and the costs in decimal. */
export const addSums = (into: Sums, t: Sums) => {
  for (const k of COUNTS) into[k] += t[k];
  into.cost = into.cost.plus(t.cost);
};
/** Sums as a report's totals: the cost a decimal string, or null when every request of them lacks one. */
export function reported(s: Sums): Totals {
  const out = {} as Totals;
  for (const k of COUNTS) out[k] = s[k];
  out.cost = s.requests > 0 && s.unpriced_requests === s.requests ? null : usdText(s.cost);
  return out;
}

export function period(q: Pick<z.infer<typeof UsageQuery>, "start" | "end">, now: number): { start: string; end: string } {
  const calendarDate = (name: 'start' | 'end', v: string) => {
    if (!isUtcDay(v)) throw errors.invalid(`'${name}' is not a calendar date.`, name);
    return v;
  };
  // `end` first: the default `start` is computed from it.
  const end = q.end === undefined ? utcDay(now) : calendarDate('end', q.end);
  const start = q.start === undefined ? utcDay(Date.parse(end) - 6 * DAY) : calendarDate('start', q.start);
  if (start > end) throw errors.invalid("'start' is after 'end'.", 'start');
  if ((Date.parse(end) - Date.parse(start)) / DAY > 366) throw errors.invalid('The period can span at most 366 days.', 'start');
  return { start, end };
}

type KeyLimits = Omit<Report['limits'], 'user'>;
type UserLimits = Report['limits']['user'];
type Window = NonNullable<UserLimits['requests_per_minute']>;
type Slots = NonNullable<UserLimits['concurrent_jobs']>;

/** A counter's state against its limit: tokens today, requests this minute, jobs running. */
const dayOf = (limit: number, used: number, now: number): Window => ({ limit, used, remaining: Math.max(0, limit - used), reset_at: new Date(nextUtcMidnight(now)).toISOString() });
const minuteOf = (limit: number, window: { value: number; resetAt: number } | null, now: number): Window => {
  const used = window?.value ?? 0;
  // No open window: the next request starts one that ends a minute later.
  return { limit, used, remaining: Math.max(0, limit - used), reset_at: new Date(window?.resetAt ?? now + 60_000).toISOString() };
};
const slotsOf = (limit: number, active: number): Slots => ({ limit, active, remaining: Math.max(0, limit - active) });

/** One key's live counters, against the plan's limits. */
export async function keyLimits(services: UsageReportDeps, owner: CounterOwner, planId: string, now = services.clock.now()): Promise<KeyLimits> {
  const plan = planOf(services.config, planId);
  const [rpm, quota, jobs] = await Promise.all([
    services.counters.peekWindow(rpmKey(owner), now),
    services.counters.reserved(quotaKey(owner, now), now),
    services.counters.reserved(jobsKey(owner), now),
  ]);
  return {
    daily_tokens: dayOf(plan.daily_tokens, quota.settled + quota.reserved, now),
    requests_per_minute: minuteOf(plan.requests_per_minute, rpm, now),
    concurrent_jobs: slotsOf(plan.max_concurrent_jobs, jobs.holders),
  };
}

/** The user's live counters over all their keys and apps, against the plan's per-user limits (null where it sets none). */
export async function userLimits(services: UsageReportDeps, userId: string, planId: string, now = services.clock.now()): Promise<UserLimits> {
  const plan = planOf(services.config, planId);
  const [rpm, quota, jobs, keys] = await Promise.all([
    plan.user_requests_per_minute === undefined ? null : services.counters.peekWindow(userRpmKey(userId), now),
    plan.user_daily_tokens === undefined ? null : services.counters.reserved(userQuotaKey(userId, now), now),
    plan.user_max_concurrent_jobs === undefined ? null : services.counters.reserved(userJobsKey(userId), now),
    services.accounts.activeKeyCount(userId),
  ]);
  return {
    daily_tokens: quota ? dayOf(plan.user_daily_tokens!, quota.settled + quota.reserved, now) : null,
    requests_per_minute: plan.user_requests_per_minute === undefined ? null : minuteOf(plan.user_requests_per_minute, rpm, now),
    concurrent_jobs: jobs ? slotsOf(plan.user_max_concurrent_jobs!, jobs.holders) : null,
    keys: slotsOf(plan.max_keys, keys),
  };
}

type Budget = Report['budgets']['user']['daily'];

/**
 * Spend budgets' counters (nano-dollars) against their limits, summed: each key's own (a key
 * without a budget adds nothing), or the user's. Null when none of them has a budget.
 */
async function budgetOf(services: UsageReportDeps, budgets: { key: string; usd: string | undefined }[], until: number, now: number): Promise<Budget> {
  const held = budgets.filter((b): b is { key: string; usd: string } => b.usd !== undefined);
  if (!held.length) return null;
  const limit = held.reduce((n, b) => n + usdToNano(b.usd), 0);
  const used = (await Promise.all(held.map((b) => services.counters.reserved(b.key, now)))).reduce((n, r) => n + r.settled + r.reserved, 0);
  return { limit_usd: nanoToUsd(limit), spent_usd: nanoToUsd(used), remaining_usd: nanoToUsd(Math.max(0, limit - used)), reset_at: new Date(until).toISOString() };
}

/** The budgets that hold: each key's (its plan's and its own, summed like their limits) and the user's. */
async function budgetsOf(services: UsageReportDeps, principal: Principal, keys: { id: string; own?: PrincipalBudgets }[], plan: ReturnType<typeof planOf>, now: number): Promise<Report['budgets']> {
  const { userId } = principal;
  const day = utcDay(now);
  const month = utcMonth(now);
  const perKey = keys.map((k) => ({ id: k.id, b: budgetsFor(plan, { ...k.own, userDaily: undefined, userMonthly: undefined }) }));
  const user = budgetsFor(plan, principal.budgets);
  const [keyDaily, keyMonthly, userDaily, userMonthly] = await Promise.all([
    budgetOf(services, perKey.map((k) => ({ key: keySpendKey({ userId, keyId: k.id }, day), usd: k.b.keyDaily })), nextUtcMidnight(now), now),
    budgetOf(services, perKey.map((k) => ({ key: keySpendKey({ userId, keyId: k.id }, month), usd: k.b.keyMonthly })), nextUtcMonth(now), now),
    budgetOf(services, [{ key: userSpendKey(userId, day), usd: user.userDaily }], nextUtcMidnight(now), now),
    budgetOf(services, [{ key: userSpendKey(userId, month), usd: user.userMonthly }], nextUtcMonth(now), now),
  ]);
  return { key: { daily: keyDaily, monthly: keyMonthly }, user: { daily: userDaily, monthly: userMonthly } };
}

/** Several keys' counters as one allowance: limits and use add up; the earliest reset is named. */
function summed(all: KeyLimits[], fallback: KeyLimits): KeyLimits {
  if (!all.length) return fallback;
  const add = (pick: (l: KeyLimits) => Window) => ({
    limit: all.reduce((n, l) => n + pick(l).limit, 0),
    used: all.reduce((n, l) => n + pick(l).used, 0),
    remaining: all.reduce((n, l) => n + pick(l).remaining, 0),
    reset_at: all.map((l) => pick(l).reset_at).sort()[0]!,
  });
  return {
    daily_tokens: add((l) => l.daily_tokens),
    requests_per_minute: add((l) => l.requests_per_minute),
    concurrent_jobs: {
      limit: all.reduce((n, l) => n + l.concurrent_jobs.limit, 0),
      active: all.reduce((n, l) => n + l.concurrent_jobs.active, 0),
      remaining: all.reduce((n, l) => n + l.concurrent_jobs.remaining, 0),
    },
  };
}

/** A day of one model and key, from usage_daily. */
type DayRow = SummedRow & { day: string; model: string; api_key_id: string; metered_unit: string | null; metered_quantity: number };

/**
 * The report for an API key (its own counters and ledger), or for the dashboard's session: every
 * key of the user (or the one named by `key`), counters summed.
 */
export async function usageReport(services: UsageReportDeps, principal: Principal, query: z.infer<typeof UsageQuery>): Promise<Report> {
  const now = services.clock.now();
  const plan = planOf(services.config, principal.planId);
  const { start, end } = period(query, now);
  const session = isSession(principal);
  if (query.key !== undefined && !session && query.key !== principal.keyId) throw errors.notFound(`No API key '${query.key}'.`, 'key_not_found', 'key');
  let keyIds: string[];
  let activeKeys: { id: string; own?: PrincipalBudgets }[] = [];
  let limits: KeyLimits;
  if (!session) {
    keyIds = [principal.keyId];
    limits = await keyLimits(services, principal, principal.planId, now);
  } else {
    const own = await services.accounts.userKeys(principal.userId);
    const chosen = query.key === undefined ? own : own.filter((k) => k.id === query.key);
    if (query.key !== undefined && !chosen.length) throw errors.notFound(`No API key '${query.key}'.`, 'key_not_found', 'key');
    keyIds = chosen.map((k) => k.id);
    const active = chosen.filter((k) => !k.revokedAt);
    activeKeys = active.map((k) => ({ id: k.id, own: principalBudgets({ dailyBudgetUsd: null, monthlyBudgetUsd: null }, k) }));
    // No active key: no allowance at all.
    const zeroed: KeyLimits = {
      daily_tokens: { limit: 0, used: 0, remaining: 0, reset_at: new Date(nextUtcMidnight(now)).toISOString() },
      requests_per_minute: { limit: 0, used: 0, remaining: 0, reset_at: new Date(now + 60_000).toISOString() },
      concurrent_jobs: { limit: 0, active: 0, remaining: 0 },
    };
    limits = summed(await Promise.all(active.map((k) => keyLimits(services, { userId: principal.userId, keyId: k.id }, principal.planId, now))), zeroed);
  }
  // This instance's pending records first, so the breakdown includes the latest requests. A flush
  // that just failed for want of the database says the report cannot be made: 503 now rather
  // than another timeout on the queries below.
  await services.ledger.flush();
  if (services.ledger.databaseUnavailable) throw errors.databaseUnavailable();
  // The day aggregates (usage-aggregates.ts), read by the key first: their primary key.
  const rows = keyIds.length
    ? await services.db.prisma.$queryRawUnsafe<DayRow[]>(
        `SELECT to_char(day, 'YYYY-MM-DD') AS day, model, api_key_id, ${SUMS},
           max(metered_unit) AS metered_unit, sum(metered_quantity)::float8 AS metered_quantity
         FROM usage_daily WHERE api_key_id = ANY($1) AND day >= $2::date AND day <= $3::date
         GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
        keyIds,
        start,
        end,
      )
    : [];
  const meteredOf = new Map<string, { unit: MeteredUnit; quantity: number }>();
  for (const r of rows) {
    if (!r.metered_unit) continue;
    const m = meteredOf.get(r.model);
    if (m) m.quantity += r.metered_quantity;
    else meteredOf.set(r.model, { unit: r.metered_unit as MeteredUnit, quantity: r.metered_quantity });
  }

  const totals = zeroSums();
  const sumInto = <K>(map: Map<K, Sums>, k: K, t: Sums) => {
    if (!map.has(k)) map.set(k, zeroSums());
    addSums(map.get(k)!, t);
  };
  const perModel = new Map<string, Sums>();
  const perKey = new Map<string, Sums>();
  const perDay = new Map<string, Sums>();
  const perDayModel = new Map<string, Sums>();
  for (const r of rows) {
    const t = sumsOf(r);
    addSums(totals, t);
    sumInto(perModel, r.model, t);
    sumInto(perKey, r.api_key_id, t);
    sumInto(perDay, r.day, t);
    sumInto(perDayModel, `${r.day}\n${r.model}`, t);
  }
  const sorted = <V>(map: Map<string, V>) => [...map].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const byModel = sorted(perModel).map(([model, t]) => ({ model, ...reported(t), metered: meteredOf.get(model) ?? null }));
  const byKey = sorted(perKey).map(([key_id, t]) => ({ key_id, ...reported(t) }));
  const modelsOfDay = new Map<string, Report['by_day'][number]['models']>();
  for (const [id, t] of sorted(perDayModel)) {
    const [day, model] = id.split('\n') as [string, string];
    if (!modelsOfDay.has(day)) modelsOfDay.set(day, []);
    modelsOfDay.get(day)!.push({ model, ...reported(t) });
  }
  const byDay: Report['by_day'] = [];
  for (let d = Date.parse(start); d <= Date.parse(end); d += DAY) {
    const date = utcDay(d);
    byDay.push({ date, ...reported(perDay.get(date) ?? zeroSums()), models: modelsOfDay.get(date) ?? [] });
  }
  return {
    object: 'usage',
    plan: {
      id: plan.id,
      rank: plan.rank,
      ...planLimits(plan),
      premium_models: services.catalog.entries
        .filter((e) => e.premium)
        .map((e) => ({ model: e.id, required_plan: e.required_plan, allowed: plan.rank >= rankOf(services.config, e.required_plan) })),
    },
    limits: { ...limits, user: await userLimits(services, principal.userId, principal.planId, now) },
    budgets: await budgetsOf(services, principal, session ? activeKeys : [{ id: principal.keyId, own: principal.budgets }], plan, now),
    budget_alerts: await services.budgetAlerts.list({ userId: principal.userId, limit: 20 }),
    period: { start, end },
    totals: reported(totals),
    by_key: byKey,
    by_model: byModel,
    by_day: byDay,
  };
}
