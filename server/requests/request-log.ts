// The request log's writer: each finished request trail (observe/request-trail.ts) becomes a row
// of `request_log`, written in batches off the request path, like the ledger. Usage and cost are
// not copied: they are the ledger's row of the same request id, joined when read (query.ts).
//
// The log is diagnostics, the ledger is money: records wait in memory (bounded) while the database
// is away and are dropped beyond the bound, counted in gateway_request_log_dropped_total, where
// the ledger spills to disk instead.
//
// Every string of a row is made storable when the row is made (the path and the model are the
// client's, an upstream's model name is the upstream's), and a batch the database refuses for its
// content is halved until the refused row stands alone: that row is dropped (counted, logged), the
// others are written (decision 0034).
import { Readable } from 'node:stream';
import type { BlobStore } from '../blobs/store.ts';
import type { RequestLogConfig } from '../config/schema.ts';
import type { SqlQueryable } from '../db/migrate.ts';
import type { Clock } from '../runtime/clock.ts';
import { randomToken } from '../runtime/secrets.ts';
import { STORED_ID_MAX, STORED_NAME_MAX, storable, storableOrNull } from '../runtime/stored-text.ts';
import { MAX_CLIENT_REQUEST_ID } from '../../contract/common.ts';
import { csvRows } from '../db/copy-csv.ts';
import { writeIsolating } from '../db/write-isolating.ts';
import type { RequestTrail, TrailEnd } from '../observe/request-trail.ts';
import { captureWindow, storedBody, type BodyCapture } from './capture.ts';
import type { z } from 'zod';

type Config = z.infer<typeof RequestLogConfig>;

/** One row of `request_log`, in its columns' order. */
type Row = {
  requestId: string;
  clientRequestId: string | null;
  createdAt: Date;
  apiKeyId: string | null;
  userId: string | null;
  oauthAppId: string | null;
  method: string;
  path: string;
  endpoint: string | null;
  format: string | null;
  model: string | null;
  status: number;
  errorCode: string | null;
  stream: boolean;
  aborted: boolean;
  jobId: string | null;
  latencyMs: number;
  firstTokenMs: number | null;
  upstream: string | null;
  attempts: string;
  warnings: string;
  bodiesKey: string | null;
};

const columns: [string, (r: Row) => unknown, string][] = [
  ['request_id', (r) => r.requestId, 'text'],
  ['client_request_id', (r) => r.clientRequestId, 'text'],
  ['created_at', (r) => r.createdAt, 'timestamp(3)'],
  ['api_key_id', (r) => r.apiKeyId, 'text'],
  ['user_id', (r) => r.userId, 'text'],
  ['oauth_app_id', (r) => r.oauthAppId, 'text'],
  ['method', (r) => r.method, 'text'],
  ['path', (r) => r.path, 'text'],
  ['endpoint', (r) => r.endpoint, 'text'],
  ['format', (r) => r.format, 'text'],
  ['model', (r) => r.model, 'text'],
  ['status', (r) => r.status, 'integer'],
  ['error_code', (r) => r.errorCode, 'text'],
  ['stream', (r) => r.stream, 'boolean'],
  ['aborted', (r) => r.aborted, 'boolean'],
  ['job_id', (r) => r.jobId, 'text'],
  ['latency_ms', (r) => r.latencyMs, 'integer'],
  ['first_token_ms', (r) => r.firstTokenMs, 'integer'],
  ['upstream', (r) => r.upstream, 'text'],
  // JSON kept as text: nothing queries into it, and parsing it into jsonb was a seventh of a row's cost.
  ['attempts', (r) => r.attempts, 'text'],
  ['warnings', (r) => r.warnings, 'text'],
  ['bodies_key', (r) => r.bodiesKey, 'text'],
];

/** Bounds of a row's strings: ids and codes (the gateway's), names (the catalog's, an upstream's), the client's id, the path (the client's). */
const MAX_ID = STORED_ID_MAX;
const MAX_NAME = STORED_NAME_MAX;
const MAX_CLIENT_ID = MAX_CLIENT_REQUEST_ID;
const MAX_PATH = 2048;
const MAX_WARNINGS = 50;
const MAX_WARNING = 1000;
/** Failover tries a bounded number of candidates; more in one record would be a bug's. */
const MAX_ATTEMPTS = 100;

const columnNames = columns.map(([n]) => n);
const getters = columns.map(([, get]) => get);

const insert = `INSERT INTO request_log (${columnNames.join(', ')})
  SELECT * FROM unnest(${columns.map(([, , type], j) => `$${j + 1}::${type}[]`).join(', ')})`;

/** What the HTTP layer hands over with a finished trail: the captured bodies, when capture was on. */
export type Captured = { request: string; response: BodyCapture; responseType: string | undefined };

export type RequestLogOptions = {
  flushMs?: number;
  /** Records held while the database does not take them; beyond, the oldest are dropped. */
  maxPending?: number;
  /** How often retention runs (hourly). */
  upkeepMs?: number;
  /** A record dropped: the queue was past its bound while the database was away (`backlog`), or the database refused it (`rejected`). */
  dropped?: (reason: 'backlog' | 'rejected') => void;
  log?: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
};

export class RequestLog {
  private pending: Row[] = [];
  private flushing: Promise<void> | null = null;
  private readonly timer: NodeJS.Timeout;
  private readonly upkeepTimer: NodeJS.Timeout;
  private readonly maxPending: number;
  private readonly writes = new Set<Promise<unknown>>();
  private failedAt = 0;
  private rejectedAt = 0;

  constructor(
    private readonly sql: SqlQueryable,
    readonly config: Config,
    private readonly blobs: BlobStore | null,
    private readonly clock: Clock,
    private readonly opts: RequestLogOptions = {},
  ) {
    this.maxPending = opts.maxPending ?? 50_000;
    this.timer = setInterval(() => void this.flush(), opts.flushMs ?? 1000);
    this.timer.unref();
    this.upkeepTimer = setInterval(() => void this.upkeep(), opts.upkeepMs ?? 3_600_000);
    this.upkeepTimer.unref();
  }

  /** Whether this request's bodies are kept: the gateway's switch, or the key's. */
  captures(principal: { captureBodies?: true } | undefined): boolean {
    return this.config.enabled && (this.config.capture_bodies || Boolean(principal?.captureBodies));
  }

  /** A finished request: its row is queued (its bodies stored first, when captured). */
  record(trail: RequestTrail, end: TrailEnd, upstream: string | null, captured: Captured | null): void {
    if (!this.config.enabled) return;
    // Every string storable (runtime/stored-text.ts), the JSON columns' too: jsonb refuses `\u0000`.
    const row: Row = {
      requestId: storable(trail.id, MAX_ID),
      clientRequestId: storableOrNull(trail.clientRequestId, MAX_CLIENT_ID),
      createdAt: trail.startedAt,
      apiKeyId: storableOrNull(end.principal?.keyId || null, MAX_ID),
      userId: storableOrNull(end.principal?.userId || null, MAX_ID),
      oauthAppId: storableOrNull(end.principal?.appId, MAX_ID),
      method: storable(trail.method, MAX_ID),
      path: storable(trail.path, MAX_PATH),
      endpoint: storableOrNull(trail.capability, MAX_ID),
      format: storableOrNull(trail.format, MAX_ID),
      model: storableOrNull(trail.model, MAX_NAME),
      status: end.status,
      errorCode: storableOrNull(end.errorCode, MAX_ID),
      stream: trail.stream,
      aborted: end.aborted,
      jobId: storableOrNull(trail.jobId, MAX_ID),
      latencyMs: Math.round(end.totalMs),
      firstTokenMs: trail.firstTokenMs,
      upstream: storableOrNull(upstream, MAX_NAME),
      attempts: JSON.stringify(
        trail.attempts.slice(0, MAX_ATTEMPTS).map((a) => ({
          provider: storable(a.provider, MAX_NAME),
          key: storableOrNull(a.key, MAX_NAME),
          upstream_model: storableOrNull(a.upstreamModel, MAX_NAME),
          start_ms: a.startMs,
          ms: a.ms,
          status: a.status,
          failure: storableOrNull(a.failure, MAX_ID),
          late_failure: storableOrNull(a.lateFailure, MAX_ID),
        })),
      ),
      warnings: JSON.stringify(end.warnings.slice(0, MAX_WARNINGS).map((w) => storable(w, MAX_WARNING))),
      bodiesKey: null,
    };
    if (!captured || !this.blobs) return this.queue(row);
    const write = this.storeBodies(row, captured).finally(() => {
      this.writes.delete(write);
      this.queue(row);
    });
    this.writes.add(write);
  }

  /** Bodies under `requests/<day>/<random>/`: the request id is the client's to choose, so it names no path. */
  private async storeBodies(row: Row, captured: Captured): Promise<void> {
    const key = `requests/${row.createdAt.toISOString().slice(0, 10).replace(/-/g, '')}/${randomToken(20)}/`;
    const max = this.config.max_body_bytes;
    try {
      const response = storedBody(captured.response.text(), captured.response.total, max);
      const request = storedBody(captured.request.slice(0, captureWindow(max)), Buffer.byteLength(captured.request), max);
      await this.blobs!.put(`${key}request`, Readable.from([request]), 'application/json; charset=utf-8');
      const type = captured.responseType?.startsWith('text/event-stream') ? 'text/plain; charset=utf-8' : 'application/json; charset=utf-8';
      await this.blobs!.put(`${key}response`, Readable.from([response]), type);
      row.bodiesKey = key;
    } catch (err) {
      this.opts.log?.warn({ err: String(err), request_id: row.requestId }, 'request log: captured bodies not stored');
    }
  }

  private queue(row: Row): void {
    this.pending.push(row);
    if (this.pending.length > this.maxPending) {
      this.pending.shift();
      this.opts.dropped?.('backlog');
    }
    if (this.pending.length >= 1000) void this.flush();
  }

  /** A row the database refused for its content: dropped (the others of its batch are written), said at most once a minute. */
  private rejected(row: Row, err: unknown): void {
    this.opts.dropped?.('rejected');
    if (this.clock.now() - this.rejectedAt > 60_000) {
      this.rejectedAt = this.clock.now();
      this.opts.log?.error({ err: String(err), request_id: row.requestId }, 'request log: the database refused a record, which was dropped; the others were written');
    }
  }

  /** Writes what is queued now (and waits for a write under way). */
  async flush(): Promise<void> {
    if (this.writes.size) await Promise.allSettled([...this.writes]);
    while (this.flushing) await this.flushing;
    if (!this.pending.length) return;
    const rows = this.pending;
    this.pending = [];
    this.flushing = (async () => {
      // Rows written or dropped on the way: not put back if a later write fails (each row once).
      const done = new Set<Row>();
      const mark = (batch: Row[]) => batch.forEach((r) => done.add(r));
      try {
        for (let i = 0; i < rows.length; i += 5000) {
          const chunk = rows.slice(i, i + 5000);
          await writeIsolating(
            chunk,
            (batch) => this.insert(batch),
            (row, err) => {
              done.add(row);
              this.rejected(row, err);
            },
            mark,
          );
        }
      } catch (err) {
        // What was not written goes back in the queue, oldest first, within the bound; said at most once a minute.
        this.pending = rows.filter((r) => !done.has(r)).concat(this.pending);
        while (this.pending.length > this.maxPending) {
          this.pending.shift();
          this.opts.dropped?.('backlog');
        }
        if (this.clock.now() - this.failedAt > 60_000) {
          this.failedAt = this.clock.now();
          this.opts.log?.error({ err: String(err), pending: this.pending.length }, 'request log write failed; records wait in memory and are written when the database answers');
        }
      } finally {
        this.flushing = null;
      }
    })();
    await this.flushing;
  }

  /**
   * A batch in one statement: COPY where the driver can bulk-load (the embedded database: half the
   * database's work per row, on every request's behalf), else INSERT … unnest (each column one
   * array). The log's rows have no unique key to conflict on, so COPY needs no fallback.
   */
  private async insert(batch: Row[]): Promise<void> {
    if (this.sql.copyCsv) return this.sql.copyCsv('request_log', columnNames, csvRows(batch, getters));
    await this.sql.query(insert, getters.map((get) => batch.map(get)));
  }

  /** Retention: records after `retention_days`, captured bodies after `body_retention_days`, in bounded batches. */
  async upkeep(): Promise<{ deleted: number; bodiesDeleted: number }> {
    const now = this.clock.now();
    const bodyCutoff = new Date(now - Math.min(this.config.body_retention_days, this.config.retention_days) * 86_400_000);
    const cutoff = new Date(now - this.config.retention_days * 86_400_000);
    let bodiesDeleted = 0;
    let deleted = 0;
    try {
      for (;;) {
        const rows = await this.sql.query(`SELECT id, bodies_key FROM request_log WHERE created_at < $1 AND bodies_key IS NOT NULL LIMIT 500`, [bodyCutoff]);
        if (!rows.length) break;
        for (const r of rows) if (this.blobs) await Promise.all([this.blobs.delete(`${r.bodies_key}request`), this.blobs.delete(`${r.bodies_key}response`)]);
        await this.sql.query(`UPDATE request_log SET bodies_key = NULL WHERE id = ANY($1::bigint[])`, [rows.map((r) => String(r.id))]);
        bodiesDeleted += rows.length;
      }
      for (;;) {
        const rows = await this.sql.query(`DELETE FROM request_log WHERE id IN (SELECT id FROM request_log WHERE created_at < $1 LIMIT 10000) RETURNING 1`, [cutoff]);
        deleted += rows.length;
        if (rows.length < 10000) break;
      }
    } catch (err) {
      this.opts.log?.error({ err: String(err) }, 'request log retention failed; it runs again within the hour');
    }
    return { deleted, bodiesDeleted };
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    clearInterval(this.upkeepTimer);
    await this.flush();
  }
}
