import type { PrismaClient } from '../db/client.ts';

type Bucket = { model: string; provider: string; start: number; requests: number; errors: number; latencySum: number; latencyMax: number; lastError: string | null };

/**
 * Every upstream attempt's outcome and latency, aggregated per model, provider and minute in
 * memory and written in one statement per bucket every few seconds (spec 2.7 reads them back).
 */
export class HealthRecorder {
  private buckets = new Map<string, Bucket>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly prisma: PrismaClient,
    flushMs = 10_000,
  ) {
    this.timer = setInterval(() => void this.flush(), flushMs);
    this.timer.unref();
  }

  record(model: string, provider: string, ok: boolean, latencyMs: number, errorCode?: string): void {
    const start = Math.floor(Date.now() / 60_000) * 60_000;
    const key = `${model}\u0000${provider}\u0000${start}`;
    let b = this.buckets.get(key);
    if (!b) {
      b = { model, provider, start, requests: 0, errors: 0, latencySum: 0, latencyMax: 0, lastError: null };
      this.buckets.set(key, b);
    }
    b.requests++;
    if (!ok) {
      b.errors++;
      b.lastError = errorCode ?? 'error';
    }
    b.latencySum += Math.round(latencyMs);
    b.latencyMax = Math.max(b.latencyMax, Math.round(latencyMs));
  }

  /** Pending (not yet written) aggregates, for tests and status reads. */
  pending(): Bucket[] {
    return [...this.buckets.values()];
  }

  async flush(): Promise<void> {
    if (!this.buckets.size) return;
    const batch = this.buckets;
    this.buckets = new Map();
    for (const b of batch.values()) {
      try {
        await this.prisma.$executeRaw`
          INSERT INTO model_health_samples (model, provider, bucket_start, requests, errors, latency_ms_sum, latency_ms_max, last_error_code)
          VALUES (${b.model}, ${b.provider}, ${new Date(b.start)}, ${b.requests}, ${b.errors}, ${b.latencySum}, ${b.latencyMax}, ${b.lastError})
          ON CONFLICT (model, provider, bucket_start) DO UPDATE SET
            requests = model_health_samples.requests + EXCLUDED.requests,
            errors = model_health_samples.errors + EXCLUDED.errors,
            latency_ms_sum = model_health_samples.latency_ms_sum + EXCLUDED.latency_ms_sum,
            latency_ms_max = GREATEST(model_health_samples.latency_ms_max, EXCLUDED.latency_ms_max),
            last_error_code = COALESCE(EXCLUDED.last_error_code, model_health_samples.last_error_code)`;
      } catch {
        // Keep it for the next flush rather than lose it.
        const key = `${b.model}\u0000${b.provider}\u0000${b.start}`;
        const again = this.buckets.get(key);
        if (again) {
          again.requests += b.requests;
          again.errors += b.errors;
          again.latencySum += b.latencySum;
          again.latencyMax = Math.max(again.latencyMax, b.latencyMax);
        } else this.buckets.set(key, b);
      }
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
