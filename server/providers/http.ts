// Pooled upstream HTTP: one undici Agent for the process (keep-alive, pipelining off), per-call
// timeouts from the provider's config, and upstream failures classified once for failover.
import { Agent, errors as undiciErrors, request, type Dispatcher } from 'undici';

// No cap on connections per upstream by default: a stream holds its connection for its whole
// length, so with a cap the request after the last free connection waits for some other stream
// to end (seen as seconds of time-to-first-byte at 2,000 streams). UPSTREAM_MAX_CONNECTIONS sets
// one per upstream origin for operators who must.
const maxConnections = Number(process.env.UPSTREAM_MAX_CONNECTIONS) || undefined;

export const upstreamAgent = new Agent({
  keepAliveTimeout: 30_000,
  keepAliveMaxTimeout: 300_000,
  connections: maxConnections,
  connect: { timeout: 10_000 },
});

/** A failed upstream attempt, classified for failover. */
export class UpstreamError extends Error {
  constructor(
    message: string,
    /** Upstream HTTP status, or 0 for connection errors and timeouts. */
    readonly status: number,
    /** Worth another attempt (same or next upstream). */
    readonly retryable: boolean,
    readonly code: 'upstream_error' | 'upstream_timeout' | 'upstream_unreachable' | 'upstream_rate_limited' | 'upstream_rejected',
    /** Seconds the upstream asked us to wait (Retry-After). */
    readonly retryAfter?: number,
  ) {
    super(message);
    this.name = 'UpstreamError';
  }
}

export type UpstreamCall = {
  url: string;
  headers: Record<string, string>;
  body: unknown;
  timeoutMs: number;
  signal?: AbortSignal;
};

function retryAfterSeconds(h: string | string[] | undefined): number | undefined {
  const v = Array.isArray(h) ? h[0] : h;
  if (!v) return undefined;
  const n = Number(v);
  if (Number.isFinite(n)) return n;
  const t = Date.parse(v);
  return Number.isFinite(t) ? Math.max(0, (t - Date.now()) / 1000) : undefined;
}

/** Extracts a readable message from any provider's error body. */
export function upstreamErrorMessage(text: string): string {
  try {
    const j = JSON.parse(text) as { error?: { message?: string } | string; message?: string; detail?: unknown };
    if (typeof j.error === 'string') return j.error;
    if (j.error?.message) return j.error.message;
    if (j.message) return j.message;
    if (j.detail) return JSON.stringify(j.detail);
  } catch {
    // not JSON
  }
  return text.slice(0, 500) || 'no body';
}

export function classifyStatus(status: number, text: string, retryAfter?: number): UpstreamError {
  const message = upstreamErrorMessage(text);
  if (status === 429) return new UpstreamError(message, status, true, 'upstream_rate_limited', retryAfter);
  if (status >= 500 || status === 408) return new UpstreamError(message, status, true, 'upstream_error', retryAfter);
  // 401/403/404 mean this upstream is misconfigured for the model: another upstream may work.
  if (status === 401 || status === 403 || status === 404) return new UpstreamError(message, status, true, 'upstream_error');
  return new UpstreamError(message, status, false, 'upstream_rejected');
}

/** POSTs JSON; resolves with a 2xx response whose body is still unread, throws UpstreamError otherwise. */
export async function postJson(call: UpstreamCall): Promise<Dispatcher.ResponseData> {
  let res: Dispatcher.ResponseData;
  try {
    res = await request(call.url, {
      method: 'POST',
      dispatcher: upstreamAgent,
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...call.headers },
      body: JSON.stringify(call.body),
      headersTimeout: call.timeoutMs,
      bodyTimeout: call.timeoutMs,
      signal: call.signal,
      // What a stream buffers while its client reads slower than the upstream writes (undici's
      // default is 64 KiB): thousands of concurrent streams made this most of the memory.
      highWaterMark: 16 * 1024,
    });
  } catch (err) {
    if (err instanceof undiciErrors.HeadersTimeoutError || err instanceof undiciErrors.BodyTimeoutError) {
      throw new UpstreamError('the upstream did not answer in time', 0, true, 'upstream_timeout');
    }
    if ((err as Error).name === 'AbortError') throw err;
    throw new UpstreamError(`cannot reach the upstream: ${(err as Error).message}`, 0, true, 'upstream_unreachable');
  }
  if (res.statusCode >= 200 && res.statusCode < 300) return res;
  const text = await res.body.text().catch(() => '');
  throw classifyStatus(res.statusCode, text, retryAfterSeconds(res.headers['retry-after']));
}
