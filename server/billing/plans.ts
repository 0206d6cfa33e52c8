import type { PlanConfig, ResolvedConfig } from '../config/schema.ts';
import type { PrincipalBudgets } from '../auth/principal.ts';
import { money } from './prices.ts';

const DAY = 86_400_000;

/**
 * `format` remembering its last input: dates on the request path (reset instants, the quota
 * day) repeat for every request of a window, and formatting one costs more than comparing.
 */
export function lastFormatted(format: (n: number) => string): (n: number) => string {
  let last = NaN;
  let text = '';
  return (n) => (n === last ? text : ((last = n), (text = format(n))));
}

const dayText = lastFormatted((day) => new Date(day * DAY).toISOString().slice(0, 10));
/** The UTC day containing `now`, as YYYY-MM-DD. */
export const utcDay = (now: number) => dayText(Math.floor(now / DAY));
/** A calendar date written YYYY-MM-DD (2026-02-30 is not one). */
export const isUtcDay = (day: string) => /^\d{4}-\d{2}-\d{2}$/.test(day) && !Number.isNaN(Date.parse(day)) && utcDay(Date.parse(day)) === day;
/** 00:00 UTC after `now`: when the daily quota resets. */
export const nextUtcMidnight = (now: number) => (Math.floor(now / DAY) + 1) * DAY;
/** The UTC calendar month containing `now`, as YYYY-MM. */
export const utcMonth = (now: number) => utcDay(now).slice(0, 7);
/** 00:00 UTC on the first of the month after `now`: when a monthly budget resets. */
export function nextUtcMonth(now: number): number {
  const d = new Date(now);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

/**
 * Where a principal's counters live: its API key's, and its user's (over all the user's keys and
 * OAuth grants). Every counter of a user — the user's own and those of each of their keys —
 * shares the hash tag {userId}, so one Redis script admits a request at both levels in one step
 * (one Redis Cluster slot).
 */
export type CounterOwner = { userId: string; keyId: string };

const keyBase = (o: CounterOwner) => `{${o.userId}}:key:${o.keyId}`;
const userBase = (userId: string) => `{${userId}}:user`;

export const rpmKey = (o: CounterOwner) => `${keyBase(o)}:rpm`;
export const quotaKey = (o: CounterOwner, now: number) => `${keyBase(o)}:quota:${utcDay(now)}`;
export const jobsKey = (o: CounterOwner) => `${keyBase(o)}:jobs`;
export const userRpmKey = (userId: string) => `${userBase(userId)}:rpm`;
export const userQuotaKey = (userId: string, now: number) => `${userBase(userId)}:quota:${utcDay(now)}`;
export const userJobsKey = (userId: string) => `${userBase(userId)}:jobs`;
/** Spend counters (nano-dollars) of a period: a UTC day (YYYY-MM-DD) or month (YYYY-MM). */
export const keySpendKey = (o: CounterOwner, period: string) => `${keyBase(o)}:spend:${period}`;
export const userSpendKey = (userId: string, period: string) => `${userBase(userId)}:spend:${period}`;

/** The principal's plan; a plan removed from the config falls back to the default plan. */
export function planOf(config: Pick<ResolvedConfig, 'plans' | 'defaultPlan'>, planId: string): PlanConfig {
  return config.plans.find((p) => p.id === planId) ?? config.plans.find((p) => p.id === config.defaultPlan)!;
}

export function rankOf(config: Pick<ResolvedConfig, 'plans'>, planId: string): number {
  return config.plans.find((p) => p.id === planId)?.rank ?? -1;
}

/** Two budgets in US dollars as one: the lower; either may be unset. */
const lower = (a: string | undefined, b: string | undefined) => (a === undefined ? b : b === undefined ? a : money(a).lte(b) ? a : b);

/**
 * The spend budgets that hold for a key and its user (US dollars; unset: none): a budget set on
 * the key caps it beside the plan's per-key budget (the lower binds: an owner can tighten, not
 * loosen, their plan); one set on the user replaces the plan's user budget (an operator's choice).
 */
export function budgetsFor(plan: PlanConfig, own: PrincipalBudgets | undefined) {
  return {
    keyDaily: lower(plan.daily_budget_usd, own?.keyDaily),
    keyMonthly: lower(plan.monthly_budget_usd, own?.keyMonthly),
    userDaily: own?.userDaily ?? plan.user_daily_budget_usd,
    userMonthly: own?.userMonthly ?? plan.user_monthly_budget_usd,
  };
}

/** A plan's limits as the API shows them (usage report, admin plans): null where it sets none. */
export function planLimits(plan: PlanConfig) {
  return {
    daily_tokens: plan.daily_tokens,
    requests_per_minute: plan.requests_per_minute,
    max_concurrent_jobs: plan.max_concurrent_jobs,
    user_daily_tokens: plan.user_daily_tokens ?? null,
    user_requests_per_minute: plan.user_requests_per_minute ?? null,
    user_max_concurrent_jobs: plan.user_max_concurrent_jobs ?? null,
    max_keys: plan.max_keys,
    daily_budget_usd: plan.daily_budget_usd ?? null,
    monthly_budget_usd: plan.monthly_budget_usd ?? null,
    user_daily_budget_usd: plan.user_daily_budget_usd ?? null,
    user_monthly_budget_usd: plan.user_monthly_budget_usd ?? null,
  };
}
