// What the job service and the runner share: their dependencies and the few facts both compute.
import type { Billing } from '../billing/hooks.ts';
import type { Catalog } from '../catalog/catalog.ts';
import type { ResolvedConfig } from '../config/schema.ts';
import type { Database } from '../db/client.ts';
import type { Clock } from '../runtime/clock.ts';
import type { RequestTrails } from '../observe/request-trail.ts';
import type { CounterStore } from '../stores/index.ts';

/** What jobs need besides their blob store: the database, the clock, the limits and the quota. */
export type JobDeps = {
  config: ResolvedConfig;
  db: Database;
  clock: Clock;
  counters: CounterStore;
  billing: Billing;
  catalog: Pick<Catalog, 'model'>;
  /** Each run's trail (its attempts and settlement under one span when tracing is on); none in some tests. */
  trails?: RequestTrails;
};

/** How long a job may take from submission: its reservation and slot hold as long. */
export const maxRunMs = (config: ResolvedConfig) => config.jobs.max_run_minutes * 60_000;

/** Where a job's output (its download, or the hosted file its result links to) is kept; swept with the job. */
export const jobOutputKey = (jobId: string) => `jobs/${jobId}/output`;
