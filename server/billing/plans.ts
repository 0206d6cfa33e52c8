import type { PlanConfig, ResolvedConfig } from '../config/schema.ts';

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
/** 00:00 UTC after `now`: when the daily quota resets. */
export const nextUtcMidnight = (now: number) => (Math.floor(now / DAY) + 1) * DAY;

// Every counter of one API key shares the hash tag {keyId}, so a Redis script may check the
// request limit and reserve quota in one step (one Redis Cluster slot).
export const rpmKey = (keyId: string) => `{${keyId}}:rpm`;
export const quotaKey = (keyId: string, now: number) => `{${keyId}}:quota:${utcDay(now)}`;
export const jobsKey = (keyId: string) => `{${keyId}}:jobs`;

/** The principal's plan; a plan removed from the config falls back to the default plan. */
export function planOf(config: Pick<ResolvedConfig, 'plans' | 'defaultPlan'>, planId: string): PlanConfig {
  return config.plans.find((p) => p.id === planId) ?? config.plans.find((p) => p.id === config.defaultPlan)!;
}

export function rankOf(config: Pick<ResolvedConfig, 'plans'>, planId: string): number {
  return config.plans.find((p) => p.id === planId)?.rank ?? -1;
}
