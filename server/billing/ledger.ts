// The usage ledger: one durable record per billed request, written to the database in batches
// off the request path. Each record is first appended to a local segment file, so records still
// in memory when the process dies are replayed into the database at the next start (idempotent:
// `request_id` is unique).
import { createWriteStream, mkdirSync, readdirSync, readFileSync, rmSync, type WriteStream } from 'node:fs';
import path from 'node:path';
import type { SqlQueryable } from '../db/migrate.ts';
import { isAlive } from '../runtime/data-dir.ts';

export type LedgerRecord = {
  requestId: string;
  apiKeyId: string;
  userId: string;
  oauthAppId: string | null;
  model: string;
  provider: string | null;
  upstreamModel: string | null;
  endpoint: string;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  reasoningTokens: number;
  surchargeTokens: number;
  multiplier: number;
  billedTokens: number;
  usageSource: 'reported' | 'estimated';
  status: number;
  errorCode: string | null;
  latencyMs: number | null;
  createdAt: string;
};

type Segment = { file: string; stream: WriteStream };

export class UsageLedger {
  private pending: LedgerRecord[] = [];
  private closedSegments: string[] = [];
  private segment: Segment | null = null;
  private seq = 0;
  private flushing: Promise<void> | null = null;
  /** Lines written this event-loop turn, appended to the segment together. */
  private lines: string[] = [];
  private readonly startedAt = Date.now();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly sql: SqlQueryable,
    private readonly dir: string,
    private readonly opts: { flushMs?: number; batchSize?: number; onError?: (err: unknown) => void } = {},
  ) {
    mkdirSync(dir, { recursive: true });
    this.timer = setInterval(() => void this.flush(), opts.flushMs ?? 1_000);
    this.timer.unref();
  }

  /** Replays segments a previous process left behind (it crashed before writing them). */
  async recover(): Promise<number> {
    // Segments of a live process (another gateway sharing DATA_DIR) are its own to write.
    const files = readdirSync(this.dir).filter((f) => f.endsWith('.jsonl') && !this.isMine(f) && !isAlive(Number(f.split('-')[0])));
    let n = 0;
    for (const f of files) {
      const file = path.join(this.dir, f);
      const records = readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l.trim())
        .flatMap((l) => {
          try {
            return [JSON.parse(l) as LedgerRecord];
          } catch {
            return []; // a line cut short by the crash
          }
        });
      await this.insert(records);
      rmSync(file, { force: true });
      n += records.length;
    }
    return n;
  }

  private isMine(file: string) {
    return file.startsWith(`${process.pid}-${this.startedAt}-`);
  }

  private currentSegment(): Segment {
    if (!this.segment) {
      const file = path.join(this.dir, `${process.pid}-${this.startedAt}-${this.seq++}.jsonl`);
      this.segment = { file, stream: createWriteStream(file, { flags: 'a' }) };
    }
    return this.segment;
  }

  write(record: LedgerRecord): void {
    // Lines of one event-loop turn go to the segment file in one write (one syscall, not one each).
    if (!this.lines.length) setImmediate(() => this.appendLines());
    this.lines.push(JSON.stringify(record));
    this.pending.push(record);
    if (this.pending.length >= (this.opts.batchSize ?? 500)) void this.flush();
  }

  private appendLines(): void {
    if (!this.lines.length) return;
    this.currentSegment().stream.write(this.lines.join('\n') + '\n');
    this.lines = [];
  }

  /** Writes everything pending; concurrent calls share one flush. */
  flush(): Promise<void> {
    this.flushing ??= this.doFlush().finally(() => (this.flushing = null));
    return this.flushing;
  }

  private async doFlush(): Promise<void> {
    this.appendLines();
    if (!this.pending.length) return;
    const batch = this.pending;
    this.pending = [];
    if (this.segment) {
      const s = this.segment;
      this.segment = null;
      await new Promise<void>((r) => s.stream.end(r));
      this.closedSegments.push(s.file);
    }
    try {
      await this.insert(batch);
      for (const f of this.closedSegments) rmSync(f, { force: true });
      this.closedSegments = [];
    } catch (err) {
      // Keep the records (and their segment files) for the next attempt.
      this.pending = batch.concat(this.pending);
      this.opts.onError?.(err);
    }
  }

  /**
   * One multi-row INSERT per 1,000 records straight through the driver: Prisma's query building
   * costs more CPU than the insert itself at thousands of records per second.
   */
  private async insert(records: LedgerRecord[]): Promise<void> {
    for (let i = 0; i < records.length; i += 1000) {
      const chunk = records.slice(i, i + 1000);
      const params: unknown[] = [];
      const rows = chunk.map((r) => {
        const values = [r.requestId, r.apiKeyId, r.userId, r.oauthAppId, r.model, r.provider, r.upstreamModel, r.endpoint, r.promptTokens, r.completionTokens, r.cachedTokens, r.reasoningTokens, r.surchargeTokens, r.multiplier, r.billedTokens, r.usageSource, r.status, r.errorCode, r.latencyMs, r.createdAt];
        const base = params.length;
        params.push(...values);
        return `(${values.map((_, j) => `$${base + j + 1}`).join(',')})`;
      });
      await this.sql.query(
        `INSERT INTO usage_records (request_id, api_key_id, user_id, oauth_app_id, model, provider, upstream_model, endpoint, prompt_tokens, completion_tokens, cached_tokens, reasoning_tokens, surcharge_tokens, multiplier, billed_tokens, usage_source, status, error_code, latency_ms, created_at)
         VALUES ${rows.join(',')} ON CONFLICT (request_id) DO NOTHING`,
        params,
      );
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.appendLines();
    await this.flush();
    if (this.segment) {
      const s = this.segment;
      this.segment = null;
      await new Promise<void>((r) => s.stream.end(r));
      if (!this.pending.length) rmSync(s.file, { force: true });
    }
  }
}
