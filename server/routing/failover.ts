import { GatewayError, errors } from '../runtime/errors.ts';
import type { Metrics } from '../runtime/metrics.ts';
import { upstreamFailure, type UpstreamError } from '../upstream/errors.ts';
import type { HealthRecorder } from './health.ts';
import { missingCredential } from '../providers/credentials.ts';
import { labelOf, sampleKeyOf, type PoolKey } from './key-pool.ts';
import { upstreamAtFault, type Routed, type Router } from './router.ts';
import type { AttemptHandle, RequestTrail } from '../observe/request-trail.ts';

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
  /** Where each failed attempt's raw cause is logged (warn). */
  log?: { warn(obj: object, msg: string): void };
  /** Breakers, cool-downs and key limits: candidates planned by it (`Router.plan`) are acquired from it before each is tried. */
  router?: Pick<Router, 'acquire' | 'succeeded' | 'failed' | 'failedLate' | 'end'>;
  /** The request's id (key-limit holds are named by it) and its estimated tokens (tokens per minute). */
  requestId?: string;
  tokens?: number;
  /** The request's trail: each attempt is recorded there (the request log, the tracer's spans). */
  trail?: RequestTrail;
};

type Candidate = { provider: { id: string; type?: string; api_key?: string; headers?: Record<string, string> }; upstreamModel?: string; key?: PoolKey; upstreamId?: string };

/**
 * One candidate's part in the failure: what went wrong last and how often it was tried; or why it
 * was passed over (`skipped`, with when it may be tried again).
 */
type Failure = { provider: string; upstreamModel?: string; error: UpstreamError | null; reason: string; attempts: number; /** ms until it may be tried again */ skipped?: number };

/** `openai [gpt-4o-mini]: connection refused (2 attempts)` for each upstream tried, in order. */
function failureList(failures: Failure[]): string {
  return failures
    .map((f) => `${f.provider}${f.upstreamModel ? ` [${f.upstreamModel}]` : ''}: ${f.reason}${f.attempts > 1 ? ` (${f.attempts} attempts)` : ''}`)
    .join('; ');
}

/** An upstream error's message without the `provider 'x': ` prefix the list already names. */
const reasonOf = (e: UpstreamError, provider: string) => e.message.replace(`provider '${provider}': `, '');

/** The error a client sees for an upstream that refused the request itself (not retried). */
function rejected(e: UpstreamError): GatewayError {
  if (e.status === 413) return new GatewayError(413, 'invalid_request_error', 'payload_too_large', `The upstream refused the request as too large: ${e.message}`);
  return new GatewayError(400, 'invalid_request_error', 'upstream_invalid_request', `The upstream provider rejected the request: ${e.message}`);
}

const isStackOverflow = (err: unknown) => err instanceof RangeError && /call stack/i.test(err.message);

/**
 * The gateway's own failure while building, sending or reading an attempt: not the upstream's, so
 * it is neither recorded against it nor retried. The request path recurses only over what the
 * client sent, so a stack overflow there is a request too deeply nested (400); anything else goes
 * to the error handler as an internal error (500, logged).
 */
function gatewayFailure(err: unknown): unknown {
  if (isStackOverflow(err)) return errors.invalid('The request is nested too deeply to be processed.');
  return err;
}

/** The failure class of an upstream skipped for its missing credential: in the log and the health history. */
const NOT_CONFIGURED = 'not_configured';

/** Records that an attempt counted as a success (a stream's first event) failed afterwards. */
export type Blame = (e: UpstreamError) => void;

/** Ends the answering attempt (its key's concurrency slot; its tokens per minute set to `usedTokens`). Idempotent. */
export type Release = (usedTokens?: number) => void;
const noRelease: Release = () => {};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Runs `attempt` on each candidate in order. Connection errors, timeouts, 429 and 5xx are retried
 * (bounded, with backoff) and then passed to the next upstream; a request the upstream rejects as
 * invalid is returned at once. Every upstream outcome and its latency is recorded; a failure of
 * the gateway's own code stops everything at once, recorded against no upstream. `blame` turns
 * the success into a failure when a stream breaks after its first event.
 */
export async function withFailover<T, C extends Candidate>(
  candidates: C[],
  attempt: (candidate: C) => Promise<T>,
  opts: FailoverOptions,
): Promise<{ value: T; candidate: C; blame: Blame; release: Release }> {
  const perUpstream = opts.attemptsPerUpstream ?? 2;
  const base = opts.baseBackoffMs ?? 200;
  const maxWait = opts.maxWaitMs ?? 2_000;
  const failures: Failure[] = [];
  const router = opts.router;
  let attemptNo = 0;
  // Upstreams that failed on their own account (unreachable, timed out, 5xx): their other keys would fare no better.
  const downUpstreams = new Set<string>();
  // Upstreams whose failure streak this request added to already: once per request.
  const streaked = new Set<string>();
  for (const candidate of candidates) {
    if (candidate.upstreamId && downUpstreams.has(candidate.upstreamId)) continue;
    const provider = candidate.provider.id;
    // The failure list names the key of a pool (`openai#backup`); samples and logs name it apart.
    const name = labelOf(candidate);
    const keyLabel = sampleKeyOf(candidate);
    // What every log line about this upstream names.
    const where = { provider, ...(keyLabel && { key: keyLabel }), upstream_model: candidate.upstreamModel, model: opts.model };
    // A provider the config left without the credential it needs cannot answer: named, not called.
    const missing = missingCredential(candidate.provider);
    if (missing) {
      failures.push({ provider, upstreamModel: candidate.upstreamModel, error: null, reason: missing, attempts: 0 });
      opts.log?.warn({ ...where, failure: NOT_CONFIGURED }, `upstream skipped: provider '${provider}' ${missing}`);
      continue;
    }
    const mine: Failure = { provider: name, upstreamModel: candidate.upstreamModel, error: null, reason: '', attempts: 0 };
    for (let n = 0; n < perUpstream; n++) {
      // Breaker, cool-down and the key's limits: a candidate that may not be tried now is passed over at once.
      const lease = router && candidate.key ? await router.acquire(candidate as unknown as Routed, opts.requestId ?? 'exchange', attemptNo++, opts.tokens) : null;
      if (lease && 'skip' in lease) {
        // An upstream's open breaker sets all its keys aside: named once, by the provider.
        if (lease.upstream) downUpstreams.add(candidate.upstreamId!);
        if (!mine.attempts) failures.push({ ...mine, ...(lease.upstream && { provider }), reason: lease.skip, skipped: lease.retryInMs });
        break;
      }
      const started = performance.now();
      const recorded = opts.trail?.attempt({ provider, key: keyLabel || null, upstreamModel: candidate.upstreamModel ?? null, model: opts.model });
      try {
        const value = await attempt(traced(candidate, recorded));
        recorded?.succeeded();
        const ms = performance.now() - started;
        const at = opts.health.record(opts.model, provider, true, ms, undefined, keyLabel);
        if (lease) router!.succeeded(lease, ms);
        opts.metrics.upstreamAttempts.inc({ provider, model: opts.model, outcome: 'ok' });
        opts.metrics.upstreamLatency.observe({ provider }, ms / 1000);
        const blame: Blame = (e) => {
          recorded?.failedLate(e.status || null, healthCode(e));
          opts.health.recordLateFailure(opts.model, provider, at, healthCode(e), keyLabel);
          if (lease) router!.failedLate(lease.routed, e);
          opts.log?.warn({ ...where, status: e.status || undefined, failure: e.code, cause: causeCode(e) }, `upstream failed after its first event: ${e.message}`);
        };
        return { value, candidate, blame, release: lease ? (used) => router!.end(lease, used) : noRelease };
      } catch (err) {
        if (lease) router!.end(lease);
        const e = err instanceof GatewayError ? null : upstreamFailure(err, provider);
        recorded?.failed(e?.status || null, e ? healthCode(e) : 'gateway_error');
        if (err instanceof GatewayError) throw err;
        if (!e) throw gatewayFailure(err);
        const ms = performance.now() - started;
        opts.health.record(opts.model, provider, false, ms, healthCode(e), keyLabel);
        if (lease) {
          router!.failed(lease, e, ms, !streaked.has(lease.routed.upstreamId));
          if (upstreamAtFault(e)) streaked.add(lease.routed.upstreamId);
        }
        opts.metrics.upstreamAttempts.inc({ provider, model: opts.model, outcome: e.code === 'upstream_timeout' ? 'timeout' : 'error' });
        // One line per failed attempt: enough to diagnose without the client's error (never credentials).
        opts.log?.warn(
          { ...where, attempt: n + 1, status: e.status || undefined, failure: e.code, ms: Math.round(ms), cause: causeCode(e) },
          `upstream attempt failed: ${e.message}`,
        );
        if (!e.retryable) throw rejected(e);
        if (!mine.attempts) failures.push(mine);
        mine.attempts++;
        mine.error = e;
        mine.reason = reasonOf(e, provider);
        // 401/402/403/404 will not change on a retry: next upstream. A 429 on a pooled key: the key
        // cools down and the next key is tried at once.
        if ([401, 402, 403, 404].includes(e.status) || n + 1 >= perUpstream || (e.status === 429 && router && candidate.key?.pooled)) break;
        const wait = e.retryAfter !== undefined ? e.retryAfter * 1000 : base * 2 ** n * (0.5 + Math.random());
        if (wait > maxWait) break;
        opts.onBackoff?.(wait);
        await sleep(wait);
      }
    }
    if (candidate.upstreamId && mine.error && upstreamAtFault(mine.error)) downUpstreams.add(candidate.upstreamId);
  }
  // The request failed: an upstream skipped for its missing credential counts as a failed attempt
  // (0 ms), so a model that cannot work shows its failures instead of "no traffic". Not when
  // another upstream answered: that request did not suffer from the skip.
  for (const f of failures) if (!f.error && f.skipped === undefined) opts.health.record(opts.model, f.provider, false, 0, NOT_CONFIGURED);
  const tried = failures.filter((f) => f.error);
  const list = failureList(failures);
  // Nothing was tried: every candidate was set aside (breaker open, cooling down, at its limits).
  // The client may come back when the first of them may be tried again.
  const skipped = failures.filter((f) => f.skipped !== undefined);
  if (!tried.length && skipped.length) {
    const retry = Math.min(3600, Math.max(1, Math.ceil(Math.min(...skipped.map((f) => f.skipped!)) / 1000)));
    throw new GatewayError(503, 'provider_error', 'all_upstreams_failed', `No upstream of model '${opts.model}' can take the request now: ${list}. Retry in ${retry} s.`, null, { 'retry-after': String(retry) });
  }
  // Every upstream tried ran out of time: the gateway time-out the API documents (524), not a failure of theirs.
  if (tried.length > 0 && tried.every((f) => f.error!.code === 'upstream_timeout')) {
    throw new GatewayError(524, 'server_error', 'upstream_timeout', `No upstream answered model '${opts.model}' in time: ${list}.`);
  }
  const unavailable = tried.length > 0 && tried.every((f) => f.error!.status === 429 || f.error!.status === 503);
  throw new GatewayError(unavailable ? 503 : 502, 'provider_error', 'all_upstreams_failed', `All upstreams failed for model '${opts.model}': ${list}.`);
}

/**
 * The candidate with the trail's headers for the upstream (W3C `traceparent` when traced) among its
 * provider's headers, which every upstream call sends. The same candidate when nothing is traced.
 */
function traced<C extends Candidate>(candidate: C, recorded: AttemptHandle | undefined): C {
  const headers = recorded?.headers;
  if (!headers) return candidate;
  return { ...candidate, provider: { ...candidate.provider, headers: { ...candidate.provider.headers, ...headers } } };
}

/** The socket error's code behind a network failure (for the log; its message may hold addresses, the code does not). */
function causeCode(e: UpstreamError): string | undefined {
  const c = e.cause as { code?: string; cause?: { code?: string } } | undefined;
  return c?.code ?? c?.cause?.code;
}

/** The health history's error class: the upstream's status, else the failure's code. */
const healthCode = (e: UpstreamError) => (e.status ? `http_${e.status}` : e.code);
