// Pooled upstream HTTP: one undici Agent per connect time-out (keep-alive, pipelining off), the
// provider's time limits enforced with timers while the gateway waits on the upstream, and
// upstream failures classified once for failover. Messages name the provider and the class of
// failure, never an address: a socket error's own text stays in the server log.
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { Agent, request, type Dispatcher } from 'undici';
import type { ProviderConfig } from '../config/schema.ts';
import { UpstreamStreamError } from './types.ts';

// No cap on connections per upstream by default: a stream holds its connection for its whole
// length, so with a cap the request after the last free connection waits for some other stream
// to end (seen as seconds of time-to-first-byte at 2,000 streams). UPSTREAM_MAX_CONNECTIONS sets
// one per upstream origin for operators who must.
const maxConnections = Number(process.env.UPSTREAM_MAX_CONNECTIONS) || undefined;

export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
export const DEFAULT_FIRST_BYTE_TIMEOUT_MS = 300_000;
export const DEFAULT_IDLE_TIMEOUT_MS = 120_000;

const newAgent = (connectMs: number) =>
  new Agent({
    keepAliveTimeout: 30_000,
    keepAliveMaxTimeout: 300_000,
    connections: maxConnections,
    connect: { timeout: connectMs },
    // The gateway's own timers (UpstreamLimits) bound every wait; undici's 300 s defaults would
    // cut a longer configured limit short.
    headersTimeout: 0,
    bodyTimeout: 0,
  });

export const upstreamAgent = newAgent(DEFAULT_CONNECT_TIMEOUT_MS);
const agents = new Map<number, Agent>([[DEFAULT_CONNECT_TIMEOUT_MS, upstreamAgent]]);
/** The connect time-out is the Agent's: one pool per distinct value (providers rarely differ). */
function agentFor(connectMs: number): Agent {
  let a = agents.get(connectMs);
  if (!a) agents.set(connectMs, (a = newAgent(connectMs)));
  return a;
}

/** A provider's time limits (ms), defaults applied. */
export type UpstreamLimits = { connectMs: number; firstByteMs: number; idleMs: number; totalMs: number };

const limitsCache = new WeakMap<object, UpstreamLimits>();

export function upstreamLimits(p: Pick<ProviderConfig, 'timeout_ms' | 'connect_timeout_ms' | 'first_byte_timeout_ms' | 'idle_timeout_ms'>): UpstreamLimits {
  let limits = limitsCache.get(p);
  if (!limits) limitsCache.set(p, (limits = computeLimits(p)));
  return limits;
}

function computeLimits(p: Pick<ProviderConfig, 'timeout_ms' | 'connect_timeout_ms' | 'first_byte_timeout_ms' | 'idle_timeout_ms'>): UpstreamLimits {
  const totalMs = p.timeout_ms ?? 600_000;
  return {
    connectMs: p.connect_timeout_ms ?? DEFAULT_CONNECT_TIMEOUT_MS,
    // A config that only lowers timeout_ms (what it meant before the other limits existed) still bounds every wait.
    firstByteMs: p.first_byte_timeout_ms ?? Math.min(DEFAULT_FIRST_BYTE_TIMEOUT_MS, totalMs),
    idleMs: p.idle_timeout_ms ?? Math.min(DEFAULT_IDLE_TIMEOUT_MS, totalMs),
    totalMs,
  };
}

type UpstreamCode = 'upstream_error' | 'upstream_timeout' | 'upstream_unreachable' | 'upstream_rate_limited' | 'upstream_rejected';

/** A failed upstream attempt, classified for failover. Only real upstream outcomes are UpstreamErrors. */
export class UpstreamError extends Error {
  constructor(
    message: string,
    /** Upstream HTTP status (or the one its error body names), 0 for connection errors and timeouts. */
    readonly status: number,
    /** Worth another attempt (same or next upstream). */
    readonly retryable: boolean,
    readonly code: UpstreamCode,
    /** Seconds the upstream asked us to wait (Retry-After). */
    readonly retryAfter?: number,
    /** The raw cause (a socket error): for the server log, never for the client. */
    cause?: unknown,
  ) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'UpstreamError';
  }
}

export type UpstreamCall = {
  /** The provider's id, named in error messages. */
  provider: string;
  url: string;
  headers: Record<string, string>;
  body: unknown;
  limits: UpstreamLimits;
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

export function classifyStatus(provider: string, status: number, text: string, retryAfter?: number): UpstreamError {
  return classified(provider, status, `answered HTTP ${status}: ${upstreamErrorMessage(text)}`, retryAfter);
}

function classified(provider: string, status: number, what: string, retryAfter?: number): UpstreamError {
  const message = `provider '${provider}': ${what}`;
  if (status === 429) return new UpstreamError(message, status, true, 'upstream_rate_limited', retryAfter);
  if (status >= 500 || status === 408) return new UpstreamError(message, status, true, 'upstream_error', retryAfter);
  // 401/403/404 mean this upstream is misconfigured for the model: another upstream may work.
  if (status === 401 || status === 403 || status === 404) return new UpstreamError(message, status, true, 'upstream_error');
  return new UpstreamError(message, status, false, 'upstream_rejected');
}

// The status an error object's type or status names, for bodies without a numeric one
// (Anthropic's error.type, Gemini's error.status, OpenAI's error.code/type).
const NAMED_STATUS: Record<string, number> = {
  invalid_request_error: 400,
  invalid_argument: 400,
  failed_precondition: 400,
  out_of_range: 400,
  authentication_error: 401,
  unauthenticated: 401,
  invalid_api_key: 401,
  permission_error: 403,
  permission_denied: 403,
  not_found_error: 404,
  not_found: 404,
  model_not_found: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  rate_limit_exceeded: 429,
  resource_exhausted: 429,
  api_error: 500,
  server_error: 500,
  internal: 500,
  unavailable: 503,
  overloaded_error: 503,
  deadline_exceeded: 504,
};

/** The HTTP status an upstream error object names (`code`, `status`, `type`); 502 when it names none. */
export function errorObjectStatus(error: unknown): number {
  if (!error || typeof error !== 'object') return 502;
  const e = error as Record<string, unknown>;
  for (const v of [e.code, e.status, e.status_code]) {
    const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d{3}$/.test(v) ? Number(v) : NaN;
    if (n >= 400 && n <= 599) return n;
  }
  for (const v of [e.status, e.type, e.code]) {
    const s = typeof v === 'string' ? NAMED_STATUS[v.toLowerCase()] : undefined;
    if (s) return s;
  }
  return 502;
}

/**
 * An error the upstream reported inside a 200 answer (`{"error": …}` bodies of OpenAI-compatible
 * servers and OpenRouter, Anthropic's `{"type": "error"}`, a failed Responses object, an SSE
 * error event), classified like the status it names.
 */
export function reportedError(provider: string, error: unknown): UpstreamError {
  const e = (error && typeof error === 'object' ? error : { message: error }) as Record<string, unknown>;
  const message = typeof e.message === 'string' && e.message ? e.message : typeof error === 'string' ? error : JSON.stringify(error).slice(0, 500);
  return classified(provider, errorObjectStatus(e), `reported an error: ${message}`);
}

/** The error a 200 JSON body carries instead of an answer, if any. */
export function errorInBody(json: unknown): unknown {
  if (!json || typeof json !== 'object' || Array.isArray(json)) return undefined;
  const j = json as Record<string, unknown>;
  if (j.error != null && j.error !== false) return j.error;
  if (j.type === 'error') return j.error ?? j;
  return undefined;
}

export const malformed = (provider: string, what: string, cause?: unknown) =>
  new UpstreamError(`provider '${provider}': sent malformed data (${what})`, 502, true, 'upstream_error', undefined, cause);

/**
 * The upstream failure `err` is, or null when it is not one (the gateway's own code threw, or the
 * caller aborted): only upstream failures count against an upstream and are retried.
 */
export function upstreamFailure(err: unknown, provider: string): UpstreamError | null {
  if (err instanceof UpstreamError) return err;
  if (err instanceof UpstreamStreamError) {
    // An error event the upstream sent is classified by what it says; a stream cut short is a 502.
    return err.detail !== undefined ? reportedError(provider, err.detail) : new UpstreamError(`provider '${provider}': ${err.message}`, 502, true, 'upstream_error');
  }
  return null;
}

const TLS_CODES = /^(ERR_TLS_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|ERR_SSL_)/;

/** A network-level failure by its class; the socket error's text (addresses, ports) is not repeated. */
export function networkFailure(provider: string, err: unknown, limits: UpstreamLimits): UpstreamError {
  const e = err as { code?: string; cause?: { code?: string } } | null;
  const code = e?.code ?? e?.cause?.code ?? '';
  const fail = (what: string, c: UpstreamCode = 'upstream_unreachable') => new UpstreamError(`provider '${provider}': ${what}`, 0, true, c, undefined, err);
  switch (code) {
    case 'ECONNREFUSED':
      return fail('connection refused');
    case 'ECONNRESET':
    case 'EPIPE':
      return fail('connection reset');
    case 'UND_ERR_SOCKET':
    case 'UND_ERR_CLOSED':
      return fail('connection closed before the answer was complete');
    case 'UND_ERR_CONNECT_TIMEOUT':
    case 'ETIMEDOUT':
      return fail(`timed out connecting after ${limits.connectMs} ms`, 'upstream_timeout');
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_NONAME':
      return fail('host name not found');
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
    case 'EHOSTDOWN':
    case 'ENETDOWN':
      return fail('network unreachable');
    case 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH':
    case 'UND_ERR_RES_EXCEEDED_MAX_SIZE':
      return fail('sent a body that does not match its length', 'upstream_error');
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
      return fail('timed out', 'upstream_timeout');
  }
  if (TLS_CODES.test(code)) return fail('TLS handshake failed');
  return fail(code ? `network error (${code})` : 'network error');
}

/**
 * One upstream request under the provider's time limits. The timers run only while the gateway
 * waits on the upstream: a stream suspended for a slow client does not time its upstream out.
 */
class Attempt {
  readonly controller = new AbortController();
  /** Set when one of our limits ran out: the error every failure of this attempt becomes. */
  timedOut: UpstreamError | null = null;
  private firstByte: NodeJS.Timeout | null = null;
  private total: NodeJS.Timeout | null = null;
  private idle: NodeJS.Timeout | null = null;
  /** Waiting on the upstream (not suspended while the consumer handles what it got). */
  private waiting = true;
  headersReceived = false;

  constructor(
    readonly call: UpstreamCall,
    private readonly stream: boolean,
  ) {
    const { limits } = call;
    if (call.signal) {
      if (call.signal.aborted) this.controller.abort(call.signal.reason);
      else call.signal.addEventListener('abort', () => this.controller.abort(call.signal!.reason), { once: true });
    }
    // A plain answer: headers within the first-byte limit, all of it within the total deadline.
    if (stream || limits.firstByteMs < limits.totalMs) {
      this.firstByte = setTimeout(() => this.fire(this.headersReceived ? `timed out waiting for the first event after ${limits.firstByteMs} ms` : `timed out waiting for the first byte after ${limits.firstByteMs} ms`), limits.firstByteMs);
    }
    if (!stream) this.total = setTimeout(() => this.fire(`timed out: no complete answer within ${limits.totalMs} ms`), limits.totalMs);
  }

  private fire(what: string) {
    if (this.timedOut || this.controller.signal.aborted) return;
    this.timedOut = new UpstreamError(`provider '${this.call.provider}': ${what}`, 0, true, 'upstream_timeout');
    this.controller.abort(this.timedOut);
  }

  /** Response headers are in: a plain answer's first byte. */
  gotHeaders() {
    this.headersReceived = true;
    if (!this.stream) this.clearFirstByte();
  }

  /** A stream's first complete event: from now on the idle limit applies. */
  private clearFirstByte() {
    if (this.firstByte) clearTimeout(this.firstByte);
    this.firstByte = null;
  }

  /** Progress: a stream event (or keep-alive), or a chunk of a plain body. */
  progress() {
    if (this.firstByte && this.stream) this.clearFirstByte();
    if (!this.idle) {
      const ms = this.call.limits.idleMs;
      this.idle = setTimeout(() => {
        if (this.waiting) this.fire(`stalled: nothing received for ${ms} ms`);
        else this.idle!.refresh();
      }, ms);
    } else this.idle.refresh();
  }

  /** The consumer has what it asked for (false) or asks for more (true). */
  setWaiting(waiting: boolean) {
    this.waiting = waiting;
    if (waiting && this.idle) this.idle.refresh();
  }

  get started() {
    return this.firstByte === null;
  }

  /** The error a failure of this attempt is: our time-out, the caller's abort, or the network's. */
  failure(err: unknown): unknown {
    if (this.timedOut) return this.timedOut;
    if (err instanceof UpstreamError) return err;
    if (this.call.signal?.aborted) return this.call.signal.reason ?? err;
    return networkFailure(this.call.provider, err, this.call.limits);
  }

  done() {
    this.clearFirstByte();
    if (this.total) clearTimeout(this.total);
    if (this.idle) clearTimeout(this.idle);
    this.total = this.idle = null;
  }

  abort() {
    this.done();
    if (!this.controller.signal.aborted) this.controller.abort();
  }
}

/**
 * Serialized before any network call: a body the gateway cannot serialize is the gateway's (or
 * its client's) failure, never the upstream's.
 */
function serialize(body: unknown): string {
  return JSON.stringify(body);
}

async function send(attempt: Attempt, payload: string): Promise<Dispatcher.ResponseData> {
  const { call } = attempt;
  let res: Dispatcher.ResponseData;
  try {
    res = await request(call.url, {
      method: 'POST',
      dispatcher: agentFor(call.limits.connectMs),
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...call.headers },
      body: payload,
      signal: attempt.controller.signal,
      // What a stream buffers while its client reads slower than the upstream writes (undici's
      // default is 64 KiB): thousands of concurrent streams made this most of the memory.
      highWaterMark: 16 * 1024,
    });
  } catch (err) {
    attempt.done();
    throw attempt.failure(err);
  }
  attempt.gotHeaders();
  if (res.statusCode >= 200 && res.statusCode < 300) return res;
  const text = await readAll(attempt, res).catch(() => '');
  attempt.done();
  throw classifyStatus(call.provider, res.statusCode, text, retryAfterSeconds(res.headers['retry-after']));
}

async function readAll(attempt: Attempt, res: Dispatcher.ResponseData): Promise<string> {
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of res.body) {
      attempt.progress();
      chunks.push(chunk as Buffer);
    }
  } catch (err) {
    throw attempt.failure(err);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export type UpstreamJson = { text: string; json: any; headers: Dispatcher.ResponseData['headers'] };

/**
 * POSTs JSON and reads the whole 2xx answer within the provider's limits. Throws UpstreamError for
 * every upstream failure: network, time-outs, non-2xx statuses, malformed JSON, and a 200 whose
 * body is an error. Anything else it throws (serializing the request) is the gateway's.
 */
export async function postJson(call: UpstreamCall): Promise<UpstreamJson> {
  const payload = serialize(call.body);
  const attempt = new Attempt(call, false);
  try {
    const res = await send(attempt, payload);
    const text = await readAll(attempt, res);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (err) {
      throw malformed(call.provider, 'the answer is not JSON', err);
    }
    const error = errorInBody(json);
    if (error !== undefined) throw reportedError(call.provider, error);
    return { text, json, headers: res.headers };
  } finally {
    attempt.abort();
  }
}

/** An open upstream stream: its events under the first-event and idle limits. */
export type UpstreamStream = {
  headers: Dispatcher.ResponseData['headers'];
  events(): AsyncGenerator<EventSourceMessage>;
  /** Ends the request (idempotent). */
  abort(): void;
};

/** POSTs JSON for a streamed (SSE) answer; resolves once a 2xx status is in, events unread. */
export async function postStream(call: UpstreamCall): Promise<UpstreamStream> {
  const payload = serialize(call.body);
  const attempt = new Attempt(call, true);
  let res: Dispatcher.ResponseData;
  try {
    res = await send(attempt, payload);
  } catch (err) {
    attempt.abort();
    throw err;
  }
  return { headers: res.headers, events: () => readEvents(attempt, res), abort: () => attempt.abort() };
}

async function* readEvents(attempt: Attempt, res: Dispatcher.ResponseData): AsyncGenerator<EventSourceMessage> {
  const queue: EventSourceMessage[] = [];
  // Keep-alive comments (OpenRouter's) show a live upstream once the stream started; before it,
  // only an event ends the first-event wait.
  const parser = createParser({ onEvent: (e) => queue.push(e), onComment: () => attempt.started && attempt.progress() });
  const decoder = new TextDecoder();
  try {
    try {
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        parser.feed(decoder.decode(chunk, { stream: true }));
        while (queue.length) {
          attempt.progress();
          attempt.setWaiting(false);
          yield queue.shift()!;
          attempt.setWaiting(true);
        }
      }
    } catch (err) {
      throw attempt.failure(err);
    }
    if (attempt.timedOut) throw attempt.timedOut;
    parser.feed(decoder.decode() + '\n\n');
    while (queue.length) {
      attempt.setWaiting(false);
      yield queue.shift()!;
      attempt.setWaiting(true);
    }
  } finally {
    attempt.abort();
  }
}
