// The usage ledger: one durable record per billed request, written to the database in batches
// off the request path. Each record is first appended to a local segment file, so records still
// in memory when the process dies are replayed into the database at the next start (idempotent:
// `request_id` is the gateway's own id, unique per request, with the record's time the key).
//
// One bad record never stops the others (decision 0034): every string is made storable when the
// record is written (`storedRecord`), and a batch the database refuses for its content is halved
// until the refused records stand alone; those are set aside in `rejected/` beside the segments
// (`onRejected` says where), the rest are written. Replaying a previous process's segments at
// start-up goes the same way and never fails the start: what cannot be written now waits.
//
// When the database is down or stalled (docs/decisions/0010-store-outages.md) the records wait: in
// memory up to `maxPending`, beyond that in their segment files only, and the writes are retried
// with exponential backoff (from `flushMs` up to `maxRetryDelayMs`). Once the database answers,
// what waited is written (the spilled segments read back), each record once.
import { appendFileSync, closeSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import type { SqlQueryable } from '../db/migrate.ts';
import { isDatabaseUnavailable } from '../db/unavailable.ts';
import { csvRows } from '../db/copy-csv.ts';
import { writeIsolating } from '../db/write-isolating.ts';
import { isAlive } from '../runtime/data-dir.ts';
import { STORED_ID_MAX, STORED_NAME_MAX, storable, storableOrNull } from '../runtime/stored-text.ts';
import { addRecordsToDaily, addToDaily, aggregatedColumns, type AggregatedRecord } from './usage-aggregates.ts';

/** One request's record: what the daily sums read (usage-aggregates.ts), and the rest of the row. */
export type LedgerRecord = AggregatedRecord & {
  requestId: string;
  oauthAppId: string | null;
  provider: string | null;
  upstreamModel: string | null;
  endpoint: string;
  multiplier: number;
  usageSource: 'reported' | 'estimated';
  errorCode: string | null;
  latencyMs: number | null;
};

/** Column, value, SQL type: the order of the INSERT. */
const ledgerColumns: [string, (r: LedgerRecord) => unknown, string][] = [
  ['request_id', (r) => r.requestId, 'text'],
  ['api_key_id', (r) => r.apiKeyId, 'text'],
  ['user_id', (r) => r.userId, 'text'],
  ['oauth_app_id', (r) => r.oauthAppId, 'text'],
  ['model', (r) => r.model, 'text'],
  ['provider', (r) => r.provider, 'text'],
  ['upstream_model', (r) => r.upstreamModel, 'text'],
  ['endpoint', (r) => r.endpoint, 'text'],
  ['prompt_tokens', (r) => r.promptTokens, 'integer'],
  ['completion_tokens', (r) => r.completionTokens, 'integer'],
  ['cached_tokens', (r) => r.cachedTokens, 'integer'],
  ['reasoning_tokens', (r) => r.reasoningTokens, 'integer'],
  ['surcharge_tokens', (r) => r.surchargeTokens, 'integer'],
  ['cache_write_tokens', (r) => r.cacheWriteTokens ?? 0, 'integer'],
  ['cache_write_1h_tokens', (r) => r.cacheWrite1hTokens ?? 0, 'integer'],
  ['audio_input_tokens', (r) => r.audioInputTokens ?? 0, 'integer'],
  ['image_input_tokens', (r) => r.imageInputTokens ?? 0, 'integer'],
  ['audio_output_tokens', (r) => r.audioOutputTokens ?? 0, 'integer'],
  ['image_output_tokens', (r) => r.imageOutputTokens ?? 0, 'integer'],
  ['web_search_calls', (r) => r.webSearchCalls ?? 0, 'integer'],
  ['cost', (r) => r.cost ?? null, 'numeric'],
  ['metered_unit', (r) => r.meteredUnit ?? null, 'text'],
  ['metered_quantity', (r) => r.meteredQuantity ?? null, 'double precision'],
  ['multiplier', (r) => r.multiplier, 'double precision'],
  ['billed_tokens', (r) => r.billedTokens, 'bigint'],
  ['usage_source', (r) => r.usageSource, 'text'],
  ['status', (r) => r.status, 'integer'],
  ['error_code', (r) => r.errorCode, 'text'],
  ['latency_ms', (r) => r.latencyMs, 'integer'],
  ['created_at', (r) => r.createdAt, 'timestamp(3)'],
];

const ledgerColumnNames = ledgerColumns.map(([name]) => name);

/**
 * One statement: the rows not yet there are written, and exactly those are added to their days.
 * A row skipped as already written (a retry whose first attempt committed, a replayed segment)
 * was added when it was written.
 */
const insertAndAggregate = addToDaily(
  'ins',
  `ins AS (
  INSERT INTO usage_records (${ledgerColumnNames.join(', ')})
  SELECT * FROM unnest(${ledgerColumns.map(([, , type], j) => `$${j + 1}::${type}[]`).join(', ')})
  ON CONFLICT DO NOTHING
  RETURNING ${aggregatedColumns.join(', ')}
)`,
);

const ledgerGetters = ledgerColumns.map(([, get]) => get);

export function ledgerCsv(records: LedgerRecord[]): string {
  return csvRows(records, ledgerGetters);
}

const MAX_ID = STORED_ID_MAX;
const MAX_NAME = STORED_NAME_MAX;

/**
 * The record as the database can hold it: every string NUL-free, well-formed and bounded. The ids
 * are the gateway's own and pass unchanged; an upstream's model name is the one a provider could
 * make unstorable.
 */
function storedRecord(r: LedgerRecord): LedgerRecord {
  return {
    ...r,
    requestId: storable(r.requestId, MAX_ID),
    apiKeyId: storable(r.apiKeyId, MAX_ID),
    userId: storable(r.userId, MAX_ID),
    oauthAppId: storableOrNull(r.oauthAppId, MAX_ID),
    model: storable(r.model, MAX_NAME),
    provider: storableOrNull(r.provider, MAX_NAME),
    upstreamModel: storableOrNull(r.upstreamModel, MAX_NAME),
    endpoint: storable(r.endpoint, MAX_ID),
    errorCode: storableOrNull(r.errorCode, MAX_ID),
    meteredUnit: r.meteredUnit === undefined ? undefined : storableOrNull(r.meteredUnit, MAX_ID),
  };
}

type Segment = { file: string; fd: number };

/** A segment's lines parsed; a line cut short by a crash is skipped. */
function readSegmentLines(file: string): unknown[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .flatMap((l) => {
      try {
        return [JSON.parse(l) as unknown];
      } catch {
        return [];
      }
    });
}

/** Whether a line read back is a record this ledger wrote (its ids, names and counts of the right types). */
function isLedgerRecord(r: unknown): r is LedgerRecord {
  if (!r || typeof r !== 'object' || Array.isArray(r)) return false;
  const x = r as Record<string, unknown>;
  return (
    ['requestId', 'apiKeyId', 'userId', 'model', 'endpoint', 'createdAt'].every((k) => typeof x[k] === 'string') &&
    ['promptTokens', 'completionTokens', 'billedTokens', 'status', 'multiplier'].every((k) => typeof x[k] === 'number')
  );
}

export class UsageLedger {
  private pending: LedgerRecord[] = [];
  private closedSegments: string[] = [];
  private segment: Segment | null = null;
  private seq = 0;
  private flushing: Promise<void> | null = null;
  private nextFlush: Promise<void> | null = null;
  /** Lines written this event-loop turn, appended to the segment together. */
  private lines: string[] = [];
  private readonly startedAt = Date.now();
  private readonly timer: NodeJS.Timeout;
  /** Failed writes in a row, and when the timer may try again. */
  private failures = 0;
  private retryAt = 0;
  private outage = false;
  /** Segment files holding records that are not in `pending` (written past `maxPending`). */
  private readonly spilled = new Set<string>();
  /** Of `lines`, how many are in no other place (spilled): lost if their append fails. */
  private spilledLines = 0;
  /** Records of the flush under way that were set aside: not put back if a later write of it fails. */
  private readonly setAsideNow = new Set<LedgerRecord>();

  constructor(
    private readonly sql: SqlQueryable,
    private readonly dir: string,
    private readonly opts: {
      flushMs?: number;
      batchSize?: number;
      /** Records kept in memory while the database does not take them; the rest wait on disk only. */
      maxPending?: number;
      maxRetryDelayMs?: number;
      onError?: (err: unknown, state: { pending: number; spilledSegments: number; retryInMs: number }) => void;
      /** A record the database refused for its content (or a segment line that is none), set aside in `file` (one JSON line, replayable once mended). */
      onRejected?: (record: unknown, err: unknown, file: string) => void;
    } = {},
  ) {
    mkdirSync(dir, { recursive: true });
    this.timer = setInterval(() => {
      if (Date.now() >= this.retryAt) void this.flush();
    }, opts.flushMs ?? 1_000);
    this.timer.unref();
  }

  /** The last write failed because the database is unreachable (and nothing has been written since). */
  get databaseUnavailable(): boolean {
    return this.outage;
  }

  /** Records not yet in the database: in memory, plus those only in spilled segments (not counted). */
  get backlog(): { pending: number; spilledSegments: number } {
    return { pending: this.pending.length, spilledSegments: this.spilled.size };
  }

  /** Where records the database refused are set aside. */
  get rejectedDir(): string {
    return path.join(this.dir, 'rejected');
  }

  /**
   * Replays segments a previous process left behind (it crashed before writing them): they are
   * written as spilled segments are, by the flush, so a refused record is set aside and a database
   * that fails now is tried again later. Never throws: a segment that cannot even be read is moved
   * to `rejected/` (`onError` says so). Resolves with the number of records found once the first
   * attempt is over.
   */
  async recover(): Promise<number> {
    // Segments of a live process (another gateway sharing DATA_DIR) are its own to write. One that
    // names this process's pid but not its start is an earlier run's: in a container the gateway
    // gets the same pid at every start (tini is 1, node the next), so "alive" would keep it for ever.
    const files = readdirSync(this.dir).filter((f) => {
      if (!f.endsWith('.jsonl') || this.isMine(f)) return false;
      const pid = Number(f.split('-')[0]);
      return pid === process.pid || !isAlive(pid);
    });
    let n = 0;
    for (const [i, f] of files.entries()) {
      // Claimed first, by a rename (atomic): the workers of one DATA_DIR all start by recovering,
      // and a segment is one process's to replay. A rename that fails was another's.
      const file = path.join(this.dir, `${process.pid}-${this.startedAt}-r${i}.jsonl`);
      try {
        renameSync(path.join(this.dir, f), file);
      } catch {
        continue;
      }
      try {
        n += readSegmentLines(file).length;
      } catch (err) {
        this.setAside(file, f, err);
        continue;
      }
      this.spilled.add(file);
      this.closedSegments.push(file);
    }
    if (this.spilled.size) await this.flush();
    return n;
  }

  /** A whole segment that cannot be read, moved to `rejected/` (under its first `name`) for the operator. */
  private setAside(file: string, name: string, err: unknown): void {
    const to = path.join(this.rejectedDir, name);
    try {
      mkdirSync(this.rejectedDir, { recursive: true });
      renameSync(file, to);
    } catch {
      // Left where it is: the next start tries it again.
    }
    this.opts.onError?.(new Error(`usage ledger: the segment ${name} could not be read and was moved to ${to}`, { cause: err }), this.state());
  }

  /** A segment's records, made storable; a line that is no record is set aside. */
  private readSegment(file: string): LedgerRecord[] {
    const records: LedgerRecord[] = [];
    for (const line of readSegmentLines(file)) {
      if (isLedgerRecord(line)) records.push(storedRecord(line));
      else this.reject(line, new Error(`not a usage record (in ${file})`));
    }
    return records;
  }

  /** One refused record, appended to `rejected/<pid>-<start>.jsonl`. */
  private reject(record: unknown, err: unknown): void {
    const file = path.join(this.rejectedDir, `${process.pid}-${this.startedAt}.jsonl`);
    try {
      mkdirSync(this.rejectedDir, { recursive: true });
      appendFileSync(file, JSON.stringify(record) + '\n');
    } catch {
      // A full disk: the log line below is all that remains of it.
    }
    this.opts.onRejected?.(record, err, file);
  }

  private isMine(file: string) {
    return file.startsWith(`${process.pid}-${this.startedAt}-`);
  }

  private currentSegment(): Segment {
    if (!this.segment) {
      const file = path.join(this.dir, `${process.pid}-${this.startedAt}-${this.seq++}.jsonl`);
      this.segment = { file, fd: openSync(file, 'a') };
    }
    return this.segment;
  }

  write(written: LedgerRecord): void {
    const record = storedRecord(written);
    // Lines of one event-loop turn go to the segment file in one write (one syscall, not one each).
    if (!this.lines.length) setImmediate(() => this.appendLines());
    this.lines.push(JSON.stringify(record));
    if (this.pending.length >= (this.opts.maxPending ?? 100_000)) {
      // The database has been away long: this record waits in its segment file alone.
      this.spilled.add(this.currentSegment().file);
      this.spilledLines++;
      return;
    }
    this.pending.push(record);
    if (this.pending.length >= (this.opts.batchSize ?? 500) && !this.failures) void this.flush();
  }

  /**
   * A synchronous append: a few hundred bytes into the page cache cost less than a write stream's
   * round trip through libuv's thread pool (once per request when requests come one at a time),
   * and the lines are with the kernel at the end of the turn that wrote them, not some time later.
   */
  private appendLines(): void {
    if (!this.lines.length) return;
    const text = this.lines.join('\n') + '\n';
    const spilledLines = this.spilledLines;
    this.lines = [];
    this.spilledLines = 0;
    try {
      writeSync(this.currentSegment().fd, text);
    } catch (err) {
      // A full disk costs the crash copy only: the records are still on their way to the database
      // (except those past maxPending, which had nowhere else to be).
      const lost = spilledLines ? new Error(`usage ledger: ${spilledLines} record(s) lost: the database is unreachable, ${this.pending.length} wait in memory, and the segment file could not be written`, { cause: err }) : err;
      this.opts.onError?.(lost, this.state());
    }
  }

  private closeSegment(): void {
    if (!this.segment) return;
    closeSync(this.segment.fd);
    this.closedSegments.push(this.segment.file);
    this.segment = null;
  }

  /**
   * Resolves once every record written before the call is in the database. A flush already under
   * way took its batch earlier, so a call during it queues one more (shared by all such calls).
   */
  flush(): Promise<void> {
    if (!this.flushing) {
      this.flushing = this.doFlush().finally(() => (this.flushing = null));
      return this.flushing;
    }
    this.nextFlush ??= this.flushing.then(() => {
      this.nextFlush = null;
      return this.flush();
    });
    return this.nextFlush;
  }

  private state() {
    return { pending: this.pending.length, spilledSegments: this.spilled.size, retryInMs: Math.max(0, this.retryAt - Date.now()) };
  }

  private async doFlush(): Promise<void> {
    this.appendLines();
    this.setAsideNow.clear();
    if (!this.pending.length && !this.spilled.size) return;
    const batch = this.pending;
    this.pending = [];
    this.closeSegment();
    try {
      await this.insert(batch);
      // Records that waited on disk alone: read back and written (those also in `batch` are skipped).
      for (const f of [...this.spilled]) {
        if (!this.closedSegments.includes(f)) continue;
        await this.insert(this.readSegment(f));
        this.spilled.delete(f);
      }
      for (const f of this.closedSegments) if (!this.spilled.has(f)) rmSync(f, { force: true });
      this.closedSegments = this.closedSegments.filter((f) => this.spilled.has(f));
      this.failures = 0;
      this.retryAt = 0;
      this.outage = false;
    } catch (err) {
      // Keep the records (and their segment files) for the next attempt, after a backoff.
      // Not those set aside on the way (a batch split, then a later write failed): each once.
      this.pending = (this.setAsideNow.size ? batch.filter((r) => !this.setAsideNow.has(r)) : batch).concat(this.pending);
      this.failures++;
      const flushMs = this.opts.flushMs ?? 1_000;
      this.retryAt = Date.now() + Math.min(flushMs * 2 ** Math.min(this.failures - 1, 16), this.opts.maxRetryDelayMs ?? 30_000);
      this.outage = isDatabaseUnavailable(err);
      this.opts.onError?.(err, this.state());
    }
  }

  /**
   * Where the driver can bulk-load (the embedded database), a batch goes in by COPY: half the
   * database's work per row of the INSERT below, and it runs on every request's behalf. COPY
   * writes every row or none, so when it succeeds the whole batch is added to its days, in the
   * same transaction. COPY cannot skip rows already there, so a batch it refuses (a retry whose
   * first attempt did commit, a replayed segment) takes the INSERT, which can.
   */
  private insert(records: LedgerRecord[]): Promise<void> {
    return writeIsolating(records, (batch) => this.insertBatch(batch), (record, err) => {
      this.setAsideNow.add(record);
      this.reject(record, err);
    });
  }

  private async insertBatch(records: LedgerRecord[]): Promise<void> {
    if (this.sql.copyCsv) {
      try {
        return await this.sql.copyCsv('usage_records', ledgerColumnNames, ledgerCsv(records), addRecordsToDaily(records));
      } catch {
        // Fall through to the idempotent INSERT; a real failure surfaces there.
      }
    }
    await this.insertSkippingDuplicates(records);
  }

  /**
   * One statement per 5,000 records straight through the driver, each column sent as one array
   * and turned back into rows by unnest(): Prisma's query building cost more CPU than the insert,
   * and a parameter per value (20 per row) made the database spend twice as long per row.
   */
  private async insertSkippingDuplicates(records: LedgerRecord[]): Promise<void> {
    for (let i = 0; i < records.length; i += 5000) {
      const chunk = records.slice(i, i + 5000);
      await this.sql.query(insertAndAggregate, ledgerColumns.map(([, get]) => chunk.map(get)));
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.appendLines();
    await this.flush();
    // A stop is the last chance this process has: a write that failed for a moment (a deadlock, a
    // database that did not answer in time) is tried twice more, soon, before the records are left
    // to the next start's replay.
    for (let n = 0; n < 2 && (this.pending.length || this.spilled.size); n++) {
      await new Promise((r) => setTimeout(r, 250 * (n + 1)));
      await this.flush();
    }
    this.closeSegment();
    // Records the database refused stay in their segments, replayed at the next start.
    if (!this.pending.length && !this.spilled.size) for (const f of this.closedSegments) rmSync(f, { force: true });
  }
}
