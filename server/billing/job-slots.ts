// The concurrent async job cap (max_concurrent_jobs): a slot is a reservation of 1 on the key's
// job counter, held until the job ends. A gateway that dies with a job running frees the slot
// when the reservation expires.
import type { Principal } from '../auth/principal.ts';
import type { ResolvedConfig } from '../config/schema.ts';
import type { Clock } from '../runtime/clock.ts';
import type { CounterStore } from '../stores/index.ts';
import { jobsKey, planOf } from './plans.ts';
import { rateLimited } from './service.ts';

export async function acquireJobSlot(
  deps: { counters: CounterStore; config: ResolvedConfig; clock: Clock },
  principal: Principal,
  jobId: string,
  ttlMs: number,
): Promise<void> {
  const plan = planOf(deps.config, principal.planId);
  const now = deps.clock.now();
  const r = await deps.counters.reserve(jobsKey(principal.keyId), jobId, 1, plan.max_concurrent_jobs, { ttlMs, keepUntil: now + ttlMs, now });
  if (!r.allowed) {
    const { holders } = await deps.counters.reserved(jobsKey(principal.keyId), now);
    throw rateLimited(
      'too_many_active_jobs',
      `Too many active jobs: the '${plan.id}' plan allows ${plan.max_concurrent_jobs} at once. Wait for one to finish.`,
      plan.max_concurrent_jobs,
      Math.max(0, plan.max_concurrent_jobs - holders),
      // The earliest a slot is certain to free is when the oldest reservation would expire.
      now + ttlMs,
      now,
      {},
    );
  }
}

export async function releaseJobSlot(deps: { counters: CounterStore; clock: Clock }, principal: Principal, jobId: string): Promise<void> {
  await deps.counters.settle(jobsKey(principal.keyId), jobId, 0, { keepUntil: 0, now: deps.clock.now() });
}
