// A synchronous request's work that may outlive its connection (spec: 524): the client waits up
// to `jobs.sync_timeout_seconds`; past that, the work is stored as a job leased to this instance
// and finished by the runner (JobRunner.adopt), billed once through the request's reservation.
import { setTimeout as sleep } from 'node:timers/promises';
import type { z } from 'zod';
import type { GenerationTimeoutBody, Job } from '../../../contract/jobs.ts';
import type { JobDone } from '../../jobs/kinds.ts';
import type { JobOrigin } from '../../jobs/service.ts';
import type { CapabilityDeps } from '../deps.ts';
import type { Meter } from '../../pipeline/types.ts';

type JobObject = z.infer<typeof Job>;

export type SyncOutcome<T> = { done: T } | { timeout: z.infer<typeof GenerationTimeoutBody> };

/**
 * Waits for `work`; a failure releases the reservation and is thrown. `what` names the work in the
 * 524 message; `pollPath` is where its job is polled. `done` turns the work's value into the job
 * outcome the runner stores should it be adopted.
 */
export async function syncOrJob<T>(
  services: CapabilityDeps,
  o: { origin: JobOrigin; meter: Meter; abort: AbortController; what: string; pollPath: string; show: (job: JobObject) => JobObject },
  work: Promise<T>,
  done: (value: T) => JobDone | Promise<JobDone>,
): Promise<SyncOutcome<T>> {
  const limit = new AbortController();
  const seconds = services.config.jobs.sync_timeout_seconds;
  const timedOut = sleep(seconds * 1000, 'timeout' as const, { signal: limit.signal }).catch(() => 'cancelled' as const);
  let first: T | 'timeout' | 'cancelled';
  try {
    first = await Promise.race([work, timedOut]);
  } catch (err) {
    await o.meter.fail(err);
    throw err;
  } finally {
    limit.abort();
  }
  if (first !== 'timeout' && first !== 'cancelled') return { done: first };
  let job: JobObject;
  try {
    job = await services.jobs.adopt(o.origin, o.meter.reservation, o.abort, work.then(done));
  } catch (err) {
    // The job could not be stored (database away): the work is stopped, not left unaccounted.
    o.abort.abort();
    work.catch(() => {});
    await o.meter.fail(err);
    throw err;
  }
  const id = o.origin.id;
  return {
    timeout: {
      error: {
        message: `The ${o.what} was not ready within ${seconds} s. It is still being made as job ${id}: poll GET ${o.pollPath} for the result (billed once).`,
        type: 'server_error',
        code: 'generation_timeout',
        param: null,
        job_id: id,
      },
      job: o.show(job),
    },
  };
}
