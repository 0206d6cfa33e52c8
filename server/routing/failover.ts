import { GatewayError } from '../http/errors.ts';
import type { Metrics } from '../http/metrics.ts';
import { UpstreamError } from '../providers/http.ts';
import { UpstreamStreamError } from '../providers/types.ts';
import type { HealthRecorder } from './health.ts';

export type FailoverOptions = {
  model: string;
  health: HealthRecorder;
  metrics: Metrics;
  /** Attempts on one upstream before moving to the next. */
  attemptsPerUpstream?: number;
  baseBackoffMs?: number;
  /** A Retry-After longer than this moves on to the next upstream instead of waiting. */
  maxWaitMs?: number;
  /** Told each backoff pause (upstream time, not the gateway's own). */
  onBackoff?: (ms: number) => void;
};

type Candidate = { provider: { id: string } };

function asUpstreamError(err: unknown): UpstreamError {
  if (err instanceof UpstreamError) return err;
  if (err instanceof UpstreamStreamError) return new UpstreamError(err.message, 502, true, 'upstream_error');
  if (err instanceof SyntaxError) return new UpstreamError(`the upstream sent malformed data: ${err.message}`, 502, true, 'upstream_error');
  return new UpstreamError((err as Error).message ?? String(err), 0, true, 'upstream_unreachable');
}

/** The error a client sees for an upstream that refused the request itself (not retried). */
function rejected(e: UpstreamError): GatewayError {
  if (e.status === 413) return new GatewayError(413, 'invalid_request_error', 'payload_too_large', `The upstream refused the request as too large: ${e.message}`);
  return new GatewayError(400, 'invalid_request_error', 'upstream_invalid_request', `The upstream provider rejected the request: ${e.message}`);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Runs `attempt` on each candidate in order. Connection errors, timeouts, 429 and 5xx are retried
 * (bounded, with backoff) and then passed to the next upstream; a request the upstream rejects as
 * invalid is returned at once. Every attempt's outcome and latency is recorded.
 */
export async function withFailover<T, C extends Candidate>(
  candidates: C[],
  attempt: (candidate: C) => Promise<T>,
  opts: FailoverOptions,
): Promise<{ value: T; candidate: C }> {
  const perUpstream = opts.attemptsPerUpstream ?? 2;
  const base = opts.baseBackoffMs ?? 200;
  const maxWait = opts.maxWaitMs ?? 2_000;
  const failures: UpstreamError[] = [];
  for (const candidate of candidates) {
    for (let n = 0; n < perUpstream; n++) {
      const started = performance.now();
      try {
        const value = await attempt(candidate);
        const ms = performance.now() - started;
        opts.health.record(opts.model, candidate.provider.id, true, ms);
        opts.metrics.upstreamAttempts.inc({ provider: candidate.provider.id, model: opts.model, outcome: 'ok' });
        opts.metrics.upstreamLatency.observe({ provider: candidate.provider.id }, ms / 1000);
        return { value, candidate };
      } catch (err) {
        if (err instanceof GatewayError) throw err;
        const e = asUpstreamError(err);
        const ms = performance.now() - started;
        opts.health.record(opts.model, candidate.provider.id, false, ms, e.status ? `http_${e.status}` : e.code);
        opts.metrics.upstreamAttempts.inc({ provider: candidate.provider.id, model: opts.model, outcome: e.code === 'upstream_timeout' ? 'timeout' : 'error' });
        if (!e.retryable) throw rejected(e);
        failures.push(e);
        // 401/403/404 will not change on a retry: next upstream.
        if ([401, 403, 404].includes(e.status) || n + 1 >= perUpstream) break;
        const wait = e.retryAfter !== undefined ? e.retryAfter * 1000 : base * 2 ** n * (0.5 + Math.random());
        if (wait > maxWait) break;
        opts.onBackoff?.(wait);
        await sleep(wait);
      }
    }
  }
  const unavailable = failures.every((f) => f.status === 429 || f.status === 503);
  const last = failures[failures.length - 1];
  throw new GatewayError(
    unavailable ? 503 : 502,
    'provider_error',
    'all_upstreams_failed',
    `All upstream providers failed for model '${opts.model}' after ${failures.length} attempt(s); last error: ${last?.message ?? 'unknown'}`,
  );
}
