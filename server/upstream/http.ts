// Pooled upstream HTTP: one undici Agent per connect time-out (keep-alive, pipelining off), the
// provider's time limits enforced with timers while the gateway waits on the upstream, and every
// failure classified for failover (upstream-errors.ts). JSON, SSE, raw bytes and streamed
// multipart go up; JSON, events and streamed downloads come back.
import { EventEmitter } from 'node:events';
import { Readable } from 'node:stream';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { Agent, request, type Dispatcher } from 'undici';
import type { ProviderConfig } from '../config/schema.ts';
import { multipartBody, type MultipartField } from './multipart.ts';
import { classifyStatus, errorInBody, malformed, networkFailure, reportedError, retryAfterSeconds, UpstreamError } from './errors.ts';

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

/** Where an upstream request goes, as whom, and under which limits: everything but its body. */
export type UpstreamTarget = {
  /** The provider's id, named in error messages. */
  provider: string;
  url: string;
  headers: Record<string, string>;
  limits: UpstreamLimits;
  /** The vendor's reading of its error bodies (vendor-client.ts); the shared one otherwise. */
  errorMessage?: (text: string) => string;
  signal?: AbortSignal;
};

export type UpstreamCall = UpstreamTarget & { body: unknown };

/**
 * How the answer is waited for. `whole`: headers within the first-byte limit, all of it within the
 * total deadline. `events`: the first complete event within the first-byte limit, then the idle
 * limit between events. `download`: headers within the first-byte limit, then the idle limit
 * between chunks while the consumer asks for more (a slow consumer is no stalled upstream).
 */
type AnswerKind = 'whole' | 'events' | 'download';

/**
 * What undici is given to abort an upstream request with, in place of an AbortController's
 * signal: an EventEmitter with `aborted` and `reason`, which undici takes as well. Node 20's
 * AbortSignal survives every scavenge until a full collection, whatever refers to it (measured
 * with `--trace-gc-nvp`: every signal promoted, and with it undici's listener and the request
 * state that listener reaches), so one per upstream call filled the old generation and ran a
 * mark-compact every second or so under load; an EventEmitter dies young with its request.
 */
class AbortHandle extends EventEmitter {
  aborted = false;
  reason: unknown = undefined;

  abort(reason?: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.emit('abort');
  }
}

/**
 * One upstream request under the provider's time limits. The timers run only while the gateway
 * waits on the upstream: a stream suspended for a slow client does not time its upstream out.
 * A streamed request body (`uploading`) is bounded by the idle limit while it goes up; the
 * first-byte wait starts when its last byte is sent, so a long upload is not a slow answer.
 */
class Attempt {
  readonly controller = new AbortHandle();
  /** Set when one of our limits ran out: the error every failure of this attempt becomes. */
  timedOut: UpstreamError | null = null;
  /** The gateway's own failure reading the body it uploads: never the upstream's. */
  sourceError: unknown = null;
  private firstByte: NodeJS.Timeout | null = null;
  private total: NodeJS.Timeout | null = null;
  private idle: NodeJS.Timeout | null = null;
  private uploadIdle: NodeJS.Timeout | null = null;
  /** Waiting on the upstream (not suspended while the consumer handles what it got). */
  private waiting = true;
  headersReceived = false;
  /** The answer was read to its end: undici has let go of the request, so there is nothing to abort. */
  private complete = false;

  constructor(
    readonly call: UpstreamTarget,
    private readonly kind: AnswerKind,
    uploading = false,
  ) {
    const { limits } = call;
    if (call.signal) {
      if (call.signal.aborted) this.controller.abort(call.signal.reason);
      else call.signal.addEventListener('abort', () => !this.complete && this.controller.abort(call.signal!.reason), { once: true });
    }
    if (uploading) this.uploadProgress();
    else this.armFirstByte();
    if (kind === 'whole') this.total = setTimeout(() => this.fire(`timed out: no complete answer within ${limits.totalMs} ms`), limits.totalMs);
  }

  private armFirstByte() {
    const { limits } = this.call;
    if (this.kind !== 'whole' || limits.firstByteMs < limits.totalMs) {
      this.firstByte = setTimeout(() => this.fire(this.headersReceived ? `timed out waiting for the first event after ${limits.firstByteMs} ms` : `timed out waiting for the first byte after ${limits.firstByteMs} ms`), limits.firstByteMs);
    }
  }

  private fire(what: string) {
    if (this.timedOut || this.controller.aborted) return;
    this.timedOut = new UpstreamError(`provider '${this.call.provider}': ${what}`, 0, true, 'upstream_timeout');
    this.controller.abort(this.timedOut);
  }

  /** A chunk of the request body went up (undici asks for the next one only once the last was written). */
  uploadProgress() {
    if (this.uploadIdle) return void this.uploadIdle.refresh();
    const ms = this.call.limits.idleMs;
    this.uploadIdle = setTimeout(() => this.fire(`stalled: the upload made no progress for ${ms} ms`), ms);
  }

  /** The request body is sent: now the answer is waited for. */
  uploaded() {
    if (this.uploadIdle) clearTimeout(this.uploadIdle);
    this.uploadIdle = null;
    if (!this.headersReceived && !this.controller.aborted) this.armFirstByte();
  }

  /** Response headers are in: a plain answer's first byte. */
  gotHeaders() {
    this.headersReceived = true;
    if (this.kind !== 'events') this.clearFirstByte();
  }

  /** A stream's first complete event: from now on the idle limit applies. */
  private clearFirstByte() {
    if (this.firstByte) clearTimeout(this.firstByte);
    this.firstByte = null;
  }

  /**
   * Progress: a stream event (or keep-alive), or a chunk of a plain body. The idle timer is not
   * moved at every event (a stream has hundreds, and each move re-sorted Node's timer list): the
   * time of the last activity is kept, and the timer, when it fires, waits out what remains.
   */
  progress() {
    if (this.firstByte && this.kind === 'events') this.clearFirstByte();
    this.lastActivity = Date.now();
    if (!this.idle) this.armIdle(this.call.limits.idleMs);
  }

  private lastActivity = 0;

  private armIdle(inMs: number) {
    const ms = this.call.limits.idleMs;
    this.idle = setTimeout(() => {
      const quiet = Date.now() - this.lastActivity;
      if (this.waiting && quiet >= ms) this.fire(`stalled: nothing received for ${ms} ms`);
      else this.armIdle(this.waiting ? ms - quiet : ms);
    }, inMs);
  }

  /** The consumer has what it asked for (false) or asks for more (true): the time it took is not the upstream's. */
  setWaiting(waiting: boolean) {
    this.waiting = waiting;
    if (waiting) this.lastActivity = Date.now();
  }

  get started() {
    return this.firstByte === null;
  }

  /** The error a failure of this attempt is: our time-out, the caller's abort, our own upload source, or the network's. */
  failure(err: unknown): unknown {
    if (this.timedOut) return this.timedOut;
    if (err instanceof UpstreamError) return err;
    if (this.call.signal?.aborted) return this.call.signal.reason ?? err;
    if (this.sourceError) return this.sourceError;
    return networkFailure(this.call.provider, err, this.call.limits);
  }

  done() {
    this.clearFirstByte();
    for (const t of [this.total, this.idle, this.uploadIdle]) if (t) clearTimeout(t);
    this.total = this.idle = this.uploadIdle = null;
  }

  /** The answer's last byte is in. */
  finished() {
    this.complete = true;
    this.done();
  }

  /**
   * Ends the request unless it already ended: aborting a finished request did nothing but build a
   * DOMException (with its stack) and dispatch an event, ~8% of the main thread per request.
   */
  abort() {
    this.done();
    if (!this.complete && !this.controller.aborted) this.controller.abort();
  }
}

/**
 * Serialized before any network call: a body the gateway cannot serialize is the gateway's (or
 * its client's) failure, never the upstream's.
 */
function serialize(body: unknown): string {
  return JSON.stringify(body);
}

type Payload = string | Uint8Array | Readable | undefined;

async function send(attempt: Attempt, method: 'GET' | 'POST', headers: Record<string, string>, payload: Payload): Promise<Dispatcher.ResponseData> {
  const { call } = attempt;
  let res: Dispatcher.ResponseData;
  try {
    res = await request(call.url, {
      method,
      dispatcher: agentFor(call.limits.connectMs),
      headers,
      body: payload,
      signal: attempt.controller,
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
  const e = classifyStatus(call.provider, res.statusCode, text, retryAfterSeconds(res.headers['retry-after']), call.errorMessage);
  const location = res.headers.location;
  if (res.statusCode >= 300 && res.statusCode < 400 && typeof location === 'string') e.location = location;
  throw e;
}

const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

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
  attempt.finished();
  return Buffer.concat(chunks).toString('utf8');
}

/** `json` is the parsed body, unchecked: a provider names its shape with `asWire` (json.ts). */
export type UpstreamJson = { text: string; json: unknown; headers: Dispatcher.ResponseData['headers'] };

/** The whole 2xx answer as JSON: malformed JSON and a 200 whose body is an error are upstream failures. */
async function readJson(attempt: Attempt, res: Dispatcher.ResponseData, errorsInBody = true): Promise<UpstreamJson> {
  const text = await readAll(attempt, res);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw malformed(attempt.call.provider, 'the answer is not JSON', err);
  }
  const error = errorsInBody ? errorInBody(json) : undefined;
  if (error !== undefined) throw reportedError(attempt.call.provider, error);
  return { text, json, headers: res.headers };
}

/**
 * POSTs JSON and reads the whole 2xx answer within the provider's limits. Throws UpstreamError for
 * every upstream failure: network, time-outs, non-2xx statuses, malformed JSON, and a 200 whose
 * body is an error. Anything else it throws (serializing the request) is the gateway's.
 */
export async function postJson(call: UpstreamCall): Promise<UpstreamJson> {
  const payload = serialize(call.body);
  const attempt = new Attempt(call, 'whole');
  try {
    const res = await send(attempt, 'POST', { ...JSON_HEADERS, ...call.headers }, payload);
    return await readJson(attempt, res);
  } finally {
    attempt.abort();
  }
}

/**
 * GETs JSON (polling a long-running job): the limits and failure classes of postJson, except that
 * an `error` in a 2xx body is left to the caller (an operation's own failed end carries one).
 */
export async function getJson(target: UpstreamTarget): Promise<UpstreamJson> {
  const attempt = new Attempt(target, 'whole');
  try {
    const res = await send(attempt, 'GET', { accept: 'application/json', ...target.headers }, undefined);
    return await readJson(attempt, res, false);
  } finally {
    attempt.abort();
  }
}

/**
 * Raw bytes to send: in memory, or opened per attempt (a failed-over request sends them again,
 * and a stream can be read only once). `length`, when known, is sent as Content-Length.
 */
export type BinaryBody = { data: Uint8Array | (() => Readable); contentType: string; length?: number };

/** What goes up: JSON, raw bytes, or multipart form fields (files streamed, never buffered whole). */
export type RequestBody = { json: unknown } | { binary: BinaryBody } | { multipart: MultipartField[] };

type Encoded = { headers: Record<string, string>; payload: string | Uint8Array | AsyncIterable<Uint8Array> | undefined; streamed: boolean };

function encode(body: RequestBody | undefined): Encoded {
  if (!body) return { headers: {}, payload: undefined, streamed: false };
  if ('json' in body) return { headers: { 'content-type': 'application/json' }, payload: serialize(body.json), streamed: false };
  if ('binary' in body) {
    const { data, contentType } = body.binary;
    const length = data instanceof Uint8Array ? data.byteLength : body.binary.length;
    const headers = { 'content-type': contentType, ...(length !== undefined ? { 'content-length': String(length) } : {}) };
    return data instanceof Uint8Array ? { headers, payload: data, streamed: false } : { headers, payload: data(), streamed: true };
  }
  const m = multipartBody(body.multipart);
  return { headers: { 'content-type': m.contentType, ...(m.length !== undefined ? { 'content-length': String(m.length) } : {}) }, payload: m.stream(), streamed: true };
}

/** A streamed body as undici pulls it: each chunk is upload progress; a failure of our source is ours. */
async function* tracked(attempt: Attempt, source: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  try {
    for await (const chunk of source) {
      attempt.uploadProgress();
      yield chunk;
    }
  } catch (err) {
    attempt.sourceError = err;
    throw err;
  }
  attempt.uploaded();
}

/** Opens one attempt for `body`, sent as a stream when it is one. */
function start(target: UpstreamTarget, kind: AnswerKind, method: 'GET' | 'POST', accept: string, body: RequestBody | undefined) {
  const e = encode(body);
  const attempt = new Attempt(target, kind, e.streamed);
  const payload = e.streamed ? Readable.from(tracked(attempt, e.payload as AsyncIterable<Uint8Array>), { objectMode: false }) : (e.payload as string | Uint8Array | undefined);
  const res = send(attempt, method, { accept, ...e.headers, ...target.headers }, payload);
  return { attempt, res };
}

async function answerJson(target: UpstreamTarget, body: RequestBody): Promise<UpstreamJson> {
  const { attempt, res } = start(target, 'whole', 'POST', 'application/json', body);
  try {
    return await readJson(attempt, await res);
  } finally {
    attempt.abort();
  }
}

/** POSTs raw bytes (an audio file, an image) for a JSON answer. */
export const postBinary = (target: UpstreamTarget, body: BinaryBody) => answerJson(target, { binary: body });

/** POSTs a multipart form (files streamed as they are read) for a JSON answer. */
export const postMultipart = (target: UpstreamTarget, fields: MultipartField[]) => answerJson(target, { multipart: fields });

/** A 2xx answer's bytes, streamed to whoever reads `body` (an error there is an UpstreamError). */
export type UpstreamDownload = {
  headers: Dispatcher.ResponseData['headers'];
  contentType: string | null;
  contentLength: number | null;
  body: Readable;
  /** Ends the request (idempotent); destroying `body` does too. */
  abort(): void;
};

/** Redirects a download follows (a file service's signed location). */
const MAX_REDIRECTS = 5;

/**
 * Downloads a binary answer (audio, video, an image): GET without a body, POST with one. A GET
 * follows redirects; the credential headers go only to the origin they were meant for.
 */
export async function download(target: UpstreamTarget, body?: RequestBody): Promise<UpstreamDownload> {
  let attempt: Attempt;
  let res: Dispatcher.ResponseData;
  for (let hops = 0; ; hops++) {
    const started = start(target, 'download', body ? 'POST' : 'GET', '*/*', body);
    attempt = started.attempt;
    try {
      res = await started.res;
      break;
    } catch (err) {
      attempt.abort();
      if (err instanceof UpstreamError && err.location && !body && hops < MAX_REDIRECTS) {
        const next = new URL(err.location, target.url);
        target = { ...target, url: next.href, headers: next.origin === new URL(target.url).origin ? target.headers : {} };
        continue;
      }
      throw err;
    }
  }
  const header = (name: string) => {
    const v = res.headers[name];
    return (Array.isArray(v) ? v[0] : v) ?? null;
  };
  const length = header('content-length');
  return {
    headers: res.headers,
    contentType: header('content-type'),
    contentLength: length !== null && /^\d+$/.test(length) ? Number(length) : null,
    body: chunkStream(attempt, res),
    abort: () => attempt.abort(),
  };
}

/**
 * The body as a Readable that pulls one upstream chunk per read. Destroying it ends the request at
 * once, even while a read waits on the upstream (a generator could not end before that read does).
 */
function chunkStream(attempt: Attempt, res: Dispatcher.ResponseData): Readable {
  const chunks = readChunks(attempt, res);
  // Every failure of a read ends the stream: `pull` never rejects.
  const pull = async (stream: Readable) => {
    try {
      const next = await chunks.next();
      stream.push(next.done ? null : next.value);
    } catch (err) {
      stream.destroy(err as Error);
    }
  };
  return new Readable({
    read() {
      void pull(this);
    },
    destroy(err, callback) {
      attempt.abort();
      chunks.return(undefined).catch(() => {});
      callback(err);
    },
  });
}

async function* readChunks(attempt: Attempt, res: Dispatcher.ResponseData): AsyncGenerator<Buffer> {
  try {
    try {
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        attempt.progress();
        attempt.setWaiting(false);
        yield chunk;
        attempt.setWaiting(true);
      }
    } catch (err) {
      throw attempt.failure(err);
    }
    if (attempt.timedOut) throw attempt.timedOut;
    attempt.finished();
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
  const attempt = new Attempt(call, 'events');
  let res: Dispatcher.ResponseData;
  try {
    res = await send(attempt, 'POST', { ...JSON_HEADERS, ...call.headers }, payload);
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
    attempt.finished();
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
