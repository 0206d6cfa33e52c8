// The usage ledger: one durable record per billed request, written to the database in batches
// off the request path. Each record is first appended to a local segment file, so records still
// in memory when the process dies are replayed into the database at the next start (idempotent:
// `request_id` is unique).
import { createWriteStream, mkdirSync, readdirSync, readFileSync, rmSync, type WriteStream } from 'node:fs';
import path from 'node:path';
import type { PrismaClient } from '../db/client.ts';
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
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly prisma: PrismaClient,
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

  private readonly startedAt = Date.now();

  private currentSegment(): Segment {
    if (!this.segment) {
      const file = path.join(this.dir, `${process.pid}-${this.startedAt}-${this.seq++}.jsonl`);
      this.segment = { file, stream: createWriteStream(file, { flags: 'a' }) };
    }
    return this.segment;
  }

  write(record: LedgerRecord): void {
    this.currentSegment().stream.write(JSON.stringify(record) + '\n');
    this.pending.push(record);
    if (this.pending.length >= (this.opts.batchSize ?? 500)) void this.flush();
  }

  /** Writes everything pending; concurrent calls share one flush. */
  flush(): Promise<void> {
    this.flushing ??= this.doFlush().finally(() => (this.flushing = null));
    return this.flushing;
  }

  private async doFlush(): Promise<void> {
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

  private async insert(records: LedgerRecord[]): Promise<void> {
    for (let i = 0; i < records.length; i += 1000) {
      await this.prisma.usageRecord.createMany({
        data: records.slice(i, i + 1000).map((r) => ({ ...r, billedTokens: BigInt(r.billedTokens), createdAt: new Date(r.createdAt) })),
        skipDuplicates: true,
      });
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
    if (this.segment) {
      const s = this.segment;
      this.segment = null;
      await new Promise<void>((r) => s.stream.end(r));
      if (!this.pending.length) rmSync(s.file, { force: true });
    }
  }
}
