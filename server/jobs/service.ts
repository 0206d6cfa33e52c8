// Async jobs (docs/api.md, "Jobs"): submitted by an endpoint, run by the runner (runner.ts) on any
// instance, polled and downloaded only with the key that created them. The `jobs` row is the
// truth: status, the quota reservation to settle, the output's blob key.
//
//   queued ──claim──▶ in_progress ──▶ done | failed
//      ▲                  │ re-check due later (lease released)   │ after retention_hours: expired (404)
//      └─ lease expired (its instance died): claimed again, up to MAX_ATTEMPTS
import type { Readable } from 'node:stream';
import type { z } from 'zod';
import type { Job } from '../../contract/jobs.ts';
import { isSession, type Principal } from '../auth/principal.ts';
import { randomToken } from '../runtime/secrets.ts';
import { acquireJobSlot, releaseJobSlot } from '../billing/job-slots.ts';
import type { Reservation } from '../billing/hooks.ts';
import type { BlobStore } from '../blobs/store.ts';
import { beginMetered } from '../billing/metered.ts';
import { GatewayError, errors } from '../runtime/errors.ts';
import { jobObjectOf, surfaceOf } from '../config/capabilities.ts';
import { maxRunMs, type JobDeps } from './deps.ts';
import { UNKNOWN_KIND, type JobDone, type JobKinds } from './kinds.ts';
import type { JobRunner } from './runner.ts';
import { jsonColumn, storedError } from './stored.ts';
import { unstorablePath } from '../runtime/stored-text.ts';
import type { Job as JobRow } from '../db/generated/client.ts';

type JobObject = z.infer<typeof Job>;

const seconds = (d: Date | null) => (d ? Math.floor(d.getTime() / 1000) : null);

export const newJobId = () => `job_${randomToken(24)}`;

/** A synchronous request's work, kept as a job: its id (the request's billing id), owner and what it ran. */
export type JobOrigin = { id: string; principal: Principal; kind: string; model: string; request: unknown };

/**
 * A job's request is stored as it came (a JSON column): one holding what the column cannot (a NUL,
 * an unpaired surrogate) is refused with a 400 naming the field, before anything is reserved or
 * sent upstream — never an insert that fails once the work is paid for.
 */
function storableRequest(request: unknown, sent: unknown): void {
  // The body as the client sent it first, so that the field is named as the client wrote it.
  const at = unstorablePath(sent) ?? unstorablePath(request);
  if (at !== null) throw errors.invalid(`'${at}' contains a NUL character or an unpaired surrogate, which the gateway cannot store with a job: remove it.`, at);
}

/** What a job is submitted with: `request` is what is stored; `sent`, the body it was made of, as the client sent it. */
type Submission = { principal: Principal; kind: string; model: string; request: unknown; sent?: unknown };

/** The origin of a synchronous request that may become a job (`syncOrJob`), its request checked as a job's is. */
export function jobOrigin({ sent, ...o }: Submission): JobOrigin {
  storableRequest(o.request, sent);
  return { id: newJobId(), ...o };
}

export class JobService {
  constructor(
    private readonly deps: JobDeps,
    readonly blobs: BlobStore,
    private readonly kinds: JobKinds,
    private readonly runner: Pick<JobRunner, 'instance' | 'leaseMs' | 'notify' | 'adopt'>,
  ) {}

  /** How long a job may take from submission: its reservation and slot hold as long. */
  get maxRunMs(): number {
    return maxRunMs(this.deps.config);
  }

  /**
   * Admits and stores a job: a job slot (max_concurrent_jobs), then the quota reservation, then the
   * row. A failure on the way gives back what was taken.
   */
  async submit(p: Submission & { reserveTokens: number }): Promise<JobObject> {
    const kind = this.kinds.get(p.kind);
    if (!kind) throw new Error(`unknown job kind ${p.kind}`);
    storableRequest(p.request, p.sent);
    const s = this.deps;
    const id = newJobId();
    const now = s.clock.now();
    await acquireJobSlot(s, p.principal, id, this.maxRunMs);
    let reservation: Reservation | null = null;
    let meter: Awaited<ReturnType<typeof beginMetered>> | null = null;
    try {
      meter = await beginMetered(s, { requestId: id, principal: p.principal, model: p.model, endpoint: surfaceOf(kind.capability), reserveTokens: p.reserveTokens, ttlMs: this.maxRunMs });
      reservation = meter.reservation;
      const row = await s.db.prisma.job.create({
        data: { ...this.rowOf({ id, principal: p.principal, kind: p.kind, model: p.model, request: p.request }, now), status: 'queued', reservation },
      });
      await this.runner.notify(id);
      return this.toObject(row);
    } catch (err) {
      if (meter) await meter.fail(err).catch(() => {});
      await releaseJobSlot(s, p.principal, id).catch(() => {});
      throw err;
    }
  }

  /**
   * A synchronous request that outlived its time limit becomes job `o.id`, run on by this
   * instance: stored leased to it (another instance takes over if this one dies), ended by the
   * runner when `work` settles, billed once through the reservation the request made.
   */
  async adopt(o: JobOrigin, reservation: Reservation, abort: AbortController, work: Promise<JobDone>): Promise<JobObject> {
    const s = this.deps;
    const now = s.clock.now();
    const row = await s.db.prisma.job.create({
      data: {
        ...this.rowOf(o, now),
        status: 'in_progress',
        reservation,
        attempts: 1,
        startedAt: new Date(now),
        lockedBy: this.runner.instance,
        lockedUntil: new Date(now + this.runner.leaseMs),
      },
    });
    this.runner.adopt({ id: o.id, kind: o.kind, model: o.model, request: o.request, state: null, attempts: 1, reservation, apiKeyId: o.principal.keyId, userId: o.principal.userId, createdAt: row.createdAt }, abort, work);
    return this.toObject(row);
  }

  /** A synchronous request's finished work, kept as a done job: pollable by its id, its hosted output deleted with it. */
  async recordDone(o: JobOrigin, done: JobDone, startedAt: number): Promise<void> {
    const now = this.deps.clock.now();
    await this.deps.db.prisma.job.create({
      data: {
        ...this.rowOf(o, startedAt),
        status: 'done',
        result: jsonColumn(done.result ?? null),
        outputKey: done.outputKey ?? null,
        warnings: done.warnings ?? [],
        startedAt: new Date(startedAt),
        completedAt: new Date(now),
      },
    });
  }

  private rowOf(o: JobOrigin, createdAt: number) {
    return {
      id: o.id,
      kind: o.kind,
      apiKeyId: o.principal.keyId,
      userId: o.principal.userId,
      model: o.model,
      request: jsonColumn(o.request),
      runAt: new Date(createdAt),
      createdAt: new Date(createdAt),
      expiresAt: new Date(createdAt + this.deps.config.jobs.retention_hours * 3_600_000),
    };
  }

  /** The job, if this key created it, it has not expired, and (when `kinds` is given) it is of one of them. */
  async find(principal: Principal, id: string, kinds?: readonly string[]): Promise<JobRow> {
    const row = await this.deps.db.prisma.job.findUnique({ where: { id } });
    if (!row || row.status === 'expired' || row.expiresAt.getTime() <= this.deps.clock.now() || (kinds && !kinds.includes(row.kind))) {
      throw errors.notFound(`No job with id '${id}' (jobs are deleted ${this.deps.config.jobs.retention_hours} h after submission).`, 'job_not_found', 'id');
    }
    // The dashboard's session sees every job of the user's keys.
    const mine = isSession(principal) ? row.userId === principal.userId : row.apiKeyId === principal.keyId;
    if (!mine) throw errors.forbidden('unauthorized_job_access', 'This job was created with another API key; only that key may see it.', 'id');
    return row;
  }

  /** Recent jobs of the key (or, for the session, of every key of the user), newest first; expired ones left out. */
  async list(principal: Principal, limit: number): Promise<JobObject[]> {
    const rows = await this.deps.db.prisma.job.findMany({
      where: { ...(isSession(principal) ? { userId: principal.userId } : { apiKeyId: principal.keyId }), status: { not: 'expired' }, expiresAt: { gt: new Date(this.deps.clock.now()) } },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: limit,
    });
    return rows.map((r) => this.toObject(r));
  }

  async status(principal: Principal, id: string, kinds?: readonly string[]): Promise<JobObject> {
    return this.toObject(await this.find(principal, id, kinds));
  }

  /** The finished job's output, streamed. */
  async download(principal: Principal, id: string, kinds?: readonly string[]): Promise<{ body: Readable; size: number; contentType: string }> {
    const row = await this.find(principal, id, kinds);
    if (row.status !== 'done') {
      throw new GatewayError(409, 'invalid_request_error', 'job_not_ready', `The job is ${row.status}; its output can be downloaded once it is done.`, 'id');
    }
    const blob = row.outputKey ? await this.blobs.get(row.outputKey) : null;
    if (!blob) throw errors.notFound(`The job '${id}' has no output to download.`, 'job_not_found', 'id');
    return { body: blob.body, size: blob.size, contentType: row.outputType ?? blob.contentType };
  }

  toObject(row: JobRow): JobObject {
    const kind = this.kinds.get(row.kind);
    return {
      id: row.id,
      object: jobObjectOf(kind?.capability ?? UNKNOWN_KIND),
      status: row.status as JobObject['status'],
      model: row.model,
      created_at: seconds(row.createdAt)!,
      started_at: seconds(row.startedAt),
      completed_at: seconds(row.completedAt),
      expires_at: seconds(row.expiresAt)!,
      // The id the failure was logged and billed under: the job's own (a job has no request of its own).
      error: row.error ? { ...storedError(row.error), request_id: row.id } : null,
      warnings: row.warnings,
      pronunciation_warnings: row.pronunciationWarnings,
      result: row.result ?? null,
      download_url: kind?.downloadPath ? kind.downloadPath(row.id) : null,
    };
  }
}
