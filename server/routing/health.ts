import type { PrismaClient } from '../db/client.ts';
import type { Clock } from '../runtime/clock.ts';

/** Upper bounds (ms) of the latency histogram buckets; the last bucket is open-ended. */
export const LATENCY_BOUNDS = [50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000];

export type Bucket = {
  model: string;
  provider: string;
  /** The key of the provider's pool (its label: `openai#backup`); '' for a provider without a pool. */
  key: string;
  start: number;
  requests: number;
  errors: number;
  latencySum: number;
  latencyMax: number;
  hist: number[];
  lastError: string | null;
  lastErrorAt: number | null;
  lastSuccessAt: number | null;
};

export const emptyHist = () => new Array(LATENCY_BOUNDS.length + 1).fill(0) as number[];
const histIndex = (ms: number) => {
  const i = LATENCY_BOUNDS.findIndex((b) => ms <= b);
  return i < 0 ? LATENCY_BOUNDS.length : i;
};

/**
 * Every upstream attempt's outcome and latency, aggregated per model, provider and minute in
 * memory and added into the database every few seconds (one upsert per bucket, increments, so
 * several instances' counts sum correctly). No database write per request.
 */
export class HealthRecorder {
  private buckets = new Map<string, Bucket>();
  private flushing: Promise<void> = Promise.resolve();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly prisma: PrismaClient,
    private readonly clock: Clock,
    flushMs = 10_000,
  ) {
    this.timer = setInterval(() => void this.flush(), flushMs);
    this.timer.unref();
  }

  private bucket(model: string, provider: string, at: number, label: string): Bucket {
    const start = Math.floor(at / 60_000) * 60_000;
    const key = `${model}\u0000${provider}\u0000${label}\u0000${start}`;
    let b = this.buckets.get(key);
    if (!b) {
      b = { model, provider, key: label, start, requests: 0, errors: 0, latencySum: 0, latencyMax: 0, hist: emptyHist(), lastError: null, lastErrorAt: null, lastSuccessAt: null };
      this.buckets.set(key, b);
    }
    return b;
  }

  /** Records one attempt; returns when (clock time), for a later recordLateFailure. */
  record(model: string, provider: string, ok: boolean, latencyMs: number, errorCode?: string, key = ''): number {
    const now = this.clock.now();
    const b = this.bucket(model, provider, now, key);
    const ms = Math.round(latencyMs);
    b.requests++;
    if (ok) b.lastSuccessAt = now;
    else {
      b.errors++;
      b.lastError = errorCode ?? 'error';
      b.lastErrorAt = now;
    }
    b.latencySum += ms;
    b.latencyMax = Math.max(b.latencyMax, ms);
    b.hist[histIndex(ms)]!++;
    return now;
  }

  /**
   * An attempt recorded as a success at `at` (a stream, at its first event) failed afterwards: it
   * becomes an error in its own minute (no new request; the increments add up in the database
   * even when that minute was already written).
   */
  recordLateFailure(model: string, provider: string, at: number, errorCode: string, key = ''): void {
    const b = this.bucket(model, provider, at, key);
    b.errors++;
    b.lastError = errorCode;
    b.lastErrorAt = this.clock.now();
  }

  /**
   * Runs `read` (of the written samples) with no flush under way, and returns it with the
   * aggregates this instance has not written yet. A flush takes its buckets out of memory before
   * its writes land: a read in that window would see them in neither place. Reads wait for a
   * flush in progress; a flush waits for the read.
   */
  withPending<T>(read: () => Promise<T>): Promise<{ written: T; pending: Bucket[] }> {
    const run = this.flushing.then(async () => ({ written: await read(), pending: [...this.buckets.values()] }));
    this.flushing = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  /**
   * Writes what is pending. Flushes run one after another, so a caller that awaits flush() (close,
   * a report) knows every earlier write has landed too, not only its own.
   */
  flush(): Promise<void> {
    const run = this.flushing.then(() => this.flushOnce());
    this.flushing = run.catch(() => undefined);
    return run;
  }

  private async flushOnce(): Promise<void> {
    if (!this.buckets.size) return;
    const batch = this.buckets;
    this.buckets = new Map();
    for (const [key, b] of batch) {
      try {
        await this.prisma.$executeRaw`
          INSERT INTO model_health_samples (model, provider, key_label, bucket_start, requests, errors, latency_ms_sum, latency_ms_max, latency_hist, last_error_code, last_error_at, last_success_at)
          VALUES (${b.model}, ${b.provider}, ${b.key}, ${new Date(b.start)}, ${b.requests}, ${b.errors}, ${b.latencySum}, ${b.latencyMax}, ${b.hist}::int[], ${b.lastError},
                  ${b.lastErrorAt === null ? null : new Date(b.lastErrorAt)}, ${b.lastSuccessAt === null ? null : new Date(b.lastSuccessAt)})
          ON CONFLICT (model, provider, key_label, bucket_start) DO UPDATE SET
            requests = model_health_samples.requests + EXCLUDED.requests,
            errors = model_health_samples.errors + EXCLUDED.errors,
            latency_ms_sum = model_health_samples.latency_ms_sum + EXCLUDED.latency_ms_sum,
            latency_ms_max = GREATEST(model_health_samples.latency_ms_max, EXCLUDED.latency_ms_max),
            latency_hist = CASE WHEN cardinality(model_health_samples.latency_hist) = 0 THEN EXCLUDED.latency_hist
              ELSE ARRAY(SELECT a + b FROM unnest(model_health_samples.latency_hist, EXCLUDED.latency_hist) AS t(a, b)) END,
            last_error_code = COALESCE(EXCLUDED.last_error_code, model_health_samples.last_error_code),
            last_error_at = GREATEST(model_health_samples.last_error_at, EXCLUDED.last_error_at),
            last_success_at = GREATEST(model_health_samples.last_success_at, EXCLUDED.last_success_at)`;
      } catch {
        // Keep it for the next flush rather than lose it.
        const again = this.buckets.get(key);
        if (!again) this.buckets.set(key, b);
        else {
          // `again` holds what came after `b`: its last error and success stay, unless it has none.
          again.requests += b.requests;
          again.errors += b.errors;
          again.latencySum += b.latencySum;
          again.latencyMax = Math.max(again.latencyMax, b.latencyMax);
          again.hist = again.hist.map((n, i) => n + b.hist[i]!);
          if (again.lastErrorAt === null) [again.lastError, again.lastErrorAt] = [b.lastError, b.lastErrorAt];
          again.lastSuccessAt ??= b.lastSuccessAt;
        }
      }
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
