// Runs queued jobs in this process, claimed from the database with a lease, so any number of
// instances share the queue and a job whose instance died is claimed again when its lease runs
// out. A job waiting on a long upstream operation releases its lease between checks (run_at), so
// a ten-minute video holds no worker. Ending a job settles its reservation (once, whichever
// instance ends it), frees its slot and keeps the output in the blob store.
import type { Logger } from 'pino';
import { randomToken } from '../runtime/secrets.ts';
import { releaseJobSlot } from '../billing/job-slots.ts';
import type { Reservation } from '../billing/hooks.ts';
import { NOTHING, type Outcome } from '../billing/metered.ts';
import { GatewayError, errors } from '../runtime/errors.ts';
import type { BlobStore } from '../blobs/store.ts';
import { UNKNOWN_KIND, type JobDone, type JobKind, type JobKinds, type JobRecheck, type JobRecord } from './kinds.ts';
import { operationOf, surfaceOf } from '../config/capabilities.ts';
import { jobOutputKey, maxRunMs, type JobDeps } from './deps.ts';
import { databaseQueue, type JobQueue } from './queue.ts';
import { jsonColumn, storedReservation } from './stored.ts';

/** Claims of one job that ended without an outcome (its instance died) before it is given up. */
export const MAX_ATTEMPTS = 3;

/** A job this instance holds the lease of, with what ending it needs. */
export type ClaimedJob = JobRecord & { reservation: Reservation | null; apiKeyId: string; userId: string; createdAt: Date };

export type RunnerOptions = { leaseMs?: number; pollMs?: number; sweepMs?: number };

export class JobRunner {
  readonly instance = `run_${randomToken(10)}`;
  readonly leaseMs: number;
  private readonly pollMs: number;
  private running = new Map<string, AbortController>();
  private timer: NodeJS.Timeout | null = null;
  private sweeper: NodeJS.Timeout | null = null;
  private closed = false;
  private polling: Promise<void> | null = null;
  private readonly finished = new Set<Promise<void>>();
  /** What tells instances a job is due: the database poll alone, or BullMQ as well. */
  queue: JobQueue = databaseQueue;

  constructor(
    private readonly deps: JobDeps,
    private readonly blobs: BlobStore,
    private readonly kinds: JobKinds,
    private readonly log: Pick<Logger, 'warn' | 'error'>,
    private readonly opts: RunnerOptions = {},
  ) {
    this.leaseMs = opts.leaseMs ?? 30_000;
    this.pollMs = opts.pollMs ?? 500;
  }

  start(): void {
    this.timer = setInterval(() => void this.poll(), this.pollMs);
    this.timer.unref();
    this.sweeper = setInterval(() => void this.sweep().catch((err) => this.log.warn({ err }, 'job sweep failed')), this.opts.sweepMs ?? 60_000);
    this.sweeper.unref();
  }

  /** Claims and starts due jobs up to the configured concurrency (also called by tests). */
  poll(): Promise<void> {
    if (this.polling || this.closed) return this.polling ?? Promise.resolve();
    this.polling = (async () => {
      try {
        while (!this.closed && this.running.size < this.deps.config.jobs.concurrency) {
          const job = await this.claim();
          if (!job) break;
          const run = this.run(job).finally(() => this.finished.delete(run));
          this.finished.add(run);
        }
      } catch (err) {
        this.log.warn({ err }, 'claiming jobs failed; retrying');
      } finally {
        this.polling = null;
      }
    })();
    return this.polling;
  }

  /** A queue message: claim job `id` if it is due and free, and run it to its end or next check. */
  async runById(id: string): Promise<void> {
    if (this.closed) return;
    const job = await this.claim(id);
    if (!job) return; // done, running elsewhere, or not due: nothing to do
    const run = this.run(job).finally(() => this.finished.delete(run));
    this.finished.add(run);
    await run;
  }

  /** Tells the instances a job is due (no-op without BullMQ: the poll finds it). Never fails the caller. */
  async notify(id: string, delayMs = 0): Promise<void> {
    await this.queue.notify(id, delayMs).catch((err) => this.log.warn({ err, job: id }, 'job queue unavailable; the database poll will find the job'));
  }

  /** Waits for the jobs this instance is running (tests). */
  async idle(): Promise<void> {
    while (this.finished.size) await Promise.all([...this.finished]);
  }

  /** One due job, leased to this instance: queued, due for a re-check, or abandoned by a dead instance. */
  private async claim(only?: string): Promise<ClaimedJob | null> {
    const { db, clock } = this.deps;
    const now = new Date(clock.now());
    const until = new Date(clock.now() + this.leaseMs);
    const rows = await db.prisma.$queryRaw<{ id: string }[]>`
      UPDATE jobs SET status = 'in_progress', locked_by = ${this.instance}, locked_until = ${until},
             attempts = attempts + 1, started_at = COALESCE(started_at, ${now})
      WHERE id = (SELECT id FROM jobs
                  WHERE status IN ('queued', 'in_progress') AND run_at <= ${now} AND (locked_until IS NULL OR locked_until < ${now})
                    AND (${only ?? null}::text IS NULL OR id = ${only ?? null})
                  ORDER BY run_at LIMIT 1 FOR UPDATE SKIP LOCKED)
      RETURNING id`;
    if (!rows.length) return null;
    const row = await db.prisma.job.findUniqueOrThrow({ where: { id: rows[0]!.id } });
    return { id: row.id, kind: row.kind, model: row.model, request: row.request, state: row.state, attempts: row.attempts, reservation: storedReservation(row.reservation), apiKeyId: row.apiKeyId, userId: row.userId, createdAt: row.createdAt };
  }

  /**
   * Takes over work already running in this process as job `job` (a synchronous request that
   * outlived its time limit): leased like a claimed job, ended like one. `job` is already stored,
   * leased to this instance.
   */
  adopt(job: ClaimedJob, abort: AbortController, work: Promise<JobDone>): void {
    const run = this.execute(job, abort, () => work).finally(() => this.finished.delete(run));
    this.finished.add(run);
  }

  private run(job: ClaimedJob): Promise<void> {
    const abort = new AbortController();
    return this.execute(job, abort, (kind) => kind.run({ job, signal: abort.signal }));
  }

  private async execute(job: ClaimedJob, abort: AbortController, work: (kind: JobKind) => Promise<JobDone | JobRecheck>): Promise<void> {
    const services = this.deps;
    const kind = this.kinds.get(job.kind);
    this.running.set(job.id, abort);
    const heartbeat = setInterval(() => void this.renew(job.id, abort), Math.max(50, this.leaseMs / 3));
    heartbeat.unref();
    // The run's trail when tracing is on (the request log keeps no runs): its upstream attempts and
    // settlement, found by the job's id, under one span. `runEnd`: how the run ended, for it.
    const trails = services.trails;
    const trail = trails?.observed ? trails.start(job.id, 'JOB', job.kind, {}) : undefined;
    if (trail) {
      trail.jobId = job.id;
      trail.model = job.model;
      trail.capability = kind ? surfaceOf(kind.capability) : null;
      trail.operation = kind ? operationOf(kind.capability) : null;
    }
    let runEnd: { status: number; code: string | null } = { status: 200, code: null };
    const fail = (err: GatewayError, logged?: string) => {
      runEnd = { status: err.status, code: err.code };
      return this.fail(job, err, logged);
    };
    try {
      if (!kind) return await fail(errors.internal(), `no job kind '${job.kind}' in this instance`);
      if (job.attempts > MAX_ATTEMPTS) {
        return await fail(new GatewayError(500, 'server_error', 'job_interrupted', `The job was interrupted ${MAX_ATTEMPTS} times (the gateway running it stopped) and was given up. Nothing was billed.`));
      }
      if (services.clock.now() - job.createdAt.getTime() > maxRunMs(services.config)) {
        return await fail(new GatewayError(524, 'server_error', 'upstream_timeout', `The job did not finish within ${services.config.jobs.max_run_minutes} minutes. Nothing was billed.`));
      }
      let outcome;
      try {
        outcome = await work(kind);
      } catch (err) {
        if (abort.signal.aborted) return; // shut down or lease lost: another claim finishes it
        if (err instanceof GatewayError) return await fail(err);
        // reqId: the job's error object names this id as its request_id (its usage record's too).
        this.log.error({ err, job: job.id, reqId: job.id }, 'job failed in the gateway');
        return await fail(errors.internal());
      }
      if (abort.signal.aborted) return;
      if (outcome.type === 'recheck') {
        runEnd = { status: 202, code: null };
        await services.db.prisma.job.updateMany({
          where: { id: job.id, lockedBy: this.instance },
          data: { state: jsonColumn(outcome.state), runAt: new Date(services.clock.now() + outcome.inMs), lockedBy: null, lockedUntil: null, attempts: 0 },
        });
        await this.notify(job.id, outcome.inMs);
        return;
      }
      let outputKey: string | null = outcome.outputKey ?? null;
      let result = outcome.result ?? null;
      if (outcome.output) {
        outputKey = jobOutputKey(job.id);
        const stored = await this.blobs.put(outputKey, outcome.output.body, outcome.output.contentType);
        // A job whose answer is its download says what it is and how large.
        result ??= { content_type: outcome.output.contentType, bytes: stored.size };
      }
      // Billed first: if this instance dies right after, the job runs again and its settlement is
      // applied once all the same (a resumed reservation settles only while held; one ledger row).
      await this.settle(job, outcome.billing, 200, null);
      const ended = await services.db.prisma.job.updateMany({
        where: { id: job.id, lockedBy: this.instance },
        data: {
          status: 'done',
          result: jsonColumn(result),
          outputKey,
          outputType: outcome.output?.contentType ?? null,
          warnings: outcome.warnings ?? [],
          pronunciationWarnings: outcome.pronunciationWarnings ?? [],
          completedAt: new Date(services.clock.now()),
          lockedBy: null,
          lockedUntil: null,
        },
      });
      await releaseJobSlot(services, { keyId: job.apiKeyId, userId: job.userId }, job.id);
      if (ended.count) await this.dropInputs(job);
    } catch (err) {
      // Ending the job could not be recorded (the database or the blob store is away): nobody
      // awaits this run, so the failure stops here. The job keeps its lease until it lapses, then
      // is claimed again and run to its end (billed once: the reservation settles only while held).
      if (!abort.signal.aborted) this.log.error({ err, job: job.id, reqId: job.id }, 'ending the job failed; it is claimed again once its lease runs out');
      runEnd = { status: 500, code: 'internal_error' };
    } finally {
      clearInterval(heartbeat);
      this.running.delete(job.id);
      if (trails && trail) {
        const principal = { keyId: job.apiKeyId, userId: job.userId, appId: null };
        trails.finish(trail, { status: runEnd.status, errorCode: runEnd.code, aborted: abort.signal.aborted, totalMs: Math.round(trail.now()), warnings: [], principal });
      }
    }
  }

  private async settle(job: { id: string; model: string; kind: string; reservation: Reservation | null }, outcome: Outcome, status: number, code: string | null) {
    if (!job.reservation) return;
    const kind = this.kinds.get(job.kind);
    await this.deps.billing.resume(job.reservation).settle({ ...outcome, requestId: job.id, model: job.model, endpoint: surfaceOf(kind?.capability ?? UNKNOWN_KIND), status, errorCode: code, latencyMs: 0 });
  }

  private async fail(job: ClaimedJob, err: GatewayError, logged?: string) {
    const services = this.deps;
    if (logged) this.log.error({ job: job.id, reqId: job.id }, logged);
    await this.settle(job, NOTHING, err.status, err.code);
    const ended = await services.db.prisma.job.updateMany({
      where: { id: job.id, lockedBy: this.instance },
      data: { status: 'failed', error: err.toBody().error, completedAt: new Date(services.clock.now()), lockedBy: null, lockedUntil: null },
    });
    await releaseJobSlot(services, { keyId: job.apiKeyId, userId: job.userId }, job.id);
    if (ended.count) await this.dropInputs(job);
  }

  /** The blobs the job's request held (its upload), once its end is recorded by this instance. */
  private async dropInputs(job: ClaimedJob) {
    const keys = this.kinds.get(job.kind)?.inputs?.(job.request) ?? [];
    await Promise.all(keys.map((key) => this.blobs.delete(key).catch((err: unknown) => this.log.warn({ err, job: job.id, key }, 'could not delete the job’s input; it stays in the blob store'))));
  }

  /** Extends the lease; a lease another instance took over aborts this run. */
  private async renew(id: string, abort: AbortController) {
    try {
      const { count } = await this.deps.db.prisma.job.updateMany({
        where: { id, lockedBy: this.instance },
        data: { lockedUntil: new Date(this.deps.clock.now() + this.leaseMs) },
      });
      if (count === 0) abort.abort();
    } catch {
      // The database is away: keep running; the lease may lapse and another instance take over.
    }
  }

  /** Deletes expired jobs' outputs and marks them expired (polling answers 404 from expires_at on). */
  async sweep(): Promise<number> {
    const { db, clock } = this.deps;
    const now = new Date(clock.now());
    const due = await db.prisma.job.findMany({ where: { expiresAt: { lte: now }, status: { not: 'expired' } }, select: { id: true, outputKey: true }, take: 500 });
    for (const j of due) {
      if (j.outputKey) await this.blobs.delete(j.outputKey);
      await db.prisma.job.update({ where: { id: j.id }, data: { status: 'expired', outputKey: null } });
    }
    // What writes cut short by a dying process left in the store (PostgreSQL: their chunks).
    await this.blobs.sweep?.();
    return due.length;
  }

  /** Stops claiming; running jobs are aborted and their leases released, so another instance (or the next start) runs them. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    if (this.sweeper) clearInterval(this.sweeper);
    await this.polling;
    const ids = [...this.running.keys()];
    for (const a of this.running.values()) a.abort();
    await Promise.allSettled([...this.finished]);
    if (ids.length) {
      await this.deps
        .db.prisma.job.updateMany({ where: { id: { in: ids }, lockedBy: this.instance }, data: { lockedBy: null, lockedUntil: null, attempts: { decrement: 1 } } })
        .catch(() => {});
      // Another instance takes them up now rather than at its next poll.
      for (const id of ids) await this.notify(id);
    }
    await this.queue.close().catch(() => {});
  }
}
