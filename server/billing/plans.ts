import type { PlanConfig, ResolvedConfig } from '../config/schema.ts';

const DAY = 86_400_000;

/** The UTC day containing `now`, as YYYY-MM-DD. */
export const utcDay = (now: number) => new Date(Math.floor(now / DAY) * DAY).toISOString().slice(0, 10);
/** 00:00 UTC after `now`: when the daily quota resets. */
export const nextUtcMidnight = (now: number) => (Math.floor(now / DAY) + 1) * DAY;

export const rpmKey = (keyId: string) => `rpm:${keyId}`;
export const quotaKey = (keyId: string, now: number) => `quota:${keyId}:${utcDay(now)}`;
export const jobsKey = (keyId: string) => `jobs:${keyId}`;

/** The principal's plan; a plan removed from the config falls back to the default plan. */
export function planOf(config: Pick<ResolvedConfig, 'plans' | 'defaultPlan'>, planId: string): PlanConfig {
  return config.plans.find((p) => p.id === planId) ?? config.plans.find((p) => p.id === config.defaultPlan)!;
}

export function rankOf(config: Pick<ResolvedConfig, 'plans'>, planId: string): number {
  return config.plans.find((p) => p.id === planId)?.rank ?? -1;
}
