// The concurrent async job caps (max_concurrent_jobs per key, user_max_concurrent_jobs per user): a
// slot is a reservation of 1 on the key's job counter (and the user's, when the plan caps it),
// taken in one step and held until the job ends. A gateway that dies with a job running frees
// the slot when the reservation expires.
import type { Principal } from '../auth/principal.ts';
import type { ResolvedConfig } from '../config/schema.ts';
import type { Clock } from '../runtime/clock.ts';
import type { CounterStore, HoldSpec } from '../stores/index.ts';
import { jobsKey, planOf, userJobsKey } from './plans.ts';
import { rateLimited, whose, type LimitScope } from './service.ts';

/** Whose job slot: the key's, and its user's. */
type SlotOwner = Pick<Principal, 'keyId' | 'userId'>;

export async function acquireJobSlot(
  deps: { counters: CounterStore; config: ResolvedConfig; clock: Clock },
  principal: Principal,
  jobId: string,
  ttlMs: number,
): Promise<void> {
  const plan = planOf(deps.config, principal.planId);
  const now = deps.clock.now();
  const slot = (scope: LimitScope, key: string, limit: number): HoldSpec & { scope: LimitScope } => ({ scope, key, id: jobId, amount: 1, limit, ttlMs, keepUntil: now + ttlMs });
  const slots = [slot('key', jobsKey(principal), plan.max_concurrent_jobs)];
  if (plan.user_max_concurrent_jobs !== undefined) slots.push(slot('user', userJobsKey(principal.userId), plan.user_max_concurrent_jobs));
  const r = await deps.counters.admit([], slots, now);
  const refused = slots.find((_, i) => !r.quotas![i]!.allowed);
  if (!refused) return;
  const { scope, key, limit } = refused;
  const { holders } = await deps.counters.reserved(key, now);
  throw rateLimited(
    'too_many_active_jobs',
    `Too many active jobs: ${limit} at once ${whose(scope, plan.id)}. Wait for one to finish.`,
    limit,
    Math.max(0, limit - holders),
    // The earliest a slot is certain to free is when the oldest reservation would expire.
    now + ttlMs,
    now,
    {},
    scope,
  );
}

/** Frees the job's slots, the key's and the user's (a slot never taken is no error). */
export async function releaseJobSlot(deps: { counters: CounterStore; clock: Clock }, owner: SlotOwner, jobId: string): Promise<void> {
  const now = deps.clock.now();
  await Promise.all([jobsKey(owner), userJobsKey(owner.userId)].map((key) => deps.counters.settle(key, jobId, 0, { keepUntil: 0, now })));
}
