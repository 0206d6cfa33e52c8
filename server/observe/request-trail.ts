// What one request did, recorded as it happens: its upstream attempts, its quota phases, what it
// answered. Two readers, one seam (docs/decisions/0030): the request log writes the finished trail
// as a row, and the tracer (when OTEL_EXPORTER_OTLP_ENDPOINT is set) turns the same events into
// spans as they happen. The layers that do the work (failover, billing, jobs) only call the trail;
// they know neither reader.
//
// Trails are found by request id (`RequestTrails.get`): the id already travels through every layer
// (failover options, billing contexts), so nothing else has to. It is always the gateway's own id,
// unique per request: a client's X-Request-Id is `clientRequestId`, never a key.

/** An upstream attempt as it starts: who is called. */
export type AttemptStart = {
  provider: string;
  /** The pool key's label (`alias` or index) when the provider has several keys; never the key. */
  key: string | null;
  upstreamModel: string | null;
  /** The gateway model the attempt serves. */
  model: string;
};

/** An upstream attempt as it ended. */
export type AttemptOutcome = {
  /** The upstream's HTTP status; null when none came (unreachable, timed out) or when it answered. */
  status: number | null;
  /** The failure's class (`upstream_timeout`, `upstream_unreachable`, `http_429`, …); null on success. */
  failure: string | null;
};

/** One attempt of the record: times in ms from the request's start. */
export type AttemptRecord = AttemptStart & AttemptOutcome & {
  startMs: number;
  /** How long until it answered (a stream: its first event) or failed. */
  ms: number | null;
  /** A stream that broke after its first event: the attempt answered, then failed. */
  lateFailure?: string;
};

/** The billing phases a trail times (spans `gateway.quota.admit`, `gateway.quota.settle`). */
export type Phase = 'quota.admit' | 'quota.settle';

/** Usage as settled (tokens), for the span's `gen_ai.usage.*` attributes. */
export type TrailUsage = { inputTokens: number; outputTokens: number; billedTokens: number; cachedTokens?: number; reasoningTokens?: number };

/**
 * The tracer's side of an attempt: headers to send upstream (`traceparent`), its end, and a stream
 * that broke after its first event (`late`: the attempt had ended as answered by then).
 */
export type AttemptWatcher = {
  headers?: Record<string, string>;
  end(outcome: AttemptOutcome & { lateFailure?: string }, atMs: number): void;
  late?(status: number | null, failure: string, atMs: number): void;
};

/**
 * Someone who watches trails as they happen (the tracer). Every method is optional and called
 * synchronously: it must be cheap and must not throw.
 */
export type TrailObserver = {
  opened?(trail: RequestTrail, headers: Readonly<Record<string, string | string[] | undefined>>): void;
  attempt?(trail: RequestTrail, start: AttemptStart, atMs: number): AttemptWatcher | undefined;
  phase?(trail: RequestTrail, phase: Phase, startMs: number, endMs: number, failed: boolean): void;
  finished?(trail: RequestTrail): void;
};

export class RequestTrail {
  /** performance.now() at the start; every `*Ms` of the trail counts from it. */
  readonly t0 = performance.now();
  readonly startedAt = new Date();
  /** The client's own request id (validated by the HTTP layer), kept beside `id`, never instead of it. */
  clientRequestId: string | null = null;
  /** What the route names (its surface, client format and GenAI operation) and the gateway model the request names. */
  model: string | null = null;
  format: string | null = null;
  capability: string | null = null;
  operation: string | null = null;
  stream = false;
  jobId: string | null = null;
  /** The upstream's own name for the model that answered (`gen_ai.response.model`). */
  responseModel: string | null = null;
  usage: TrailUsage | null = null;
  /** When the answer's first token (a stream's first event, else the whole answer) reached the gateway. */
  firstTokenMs: number | null = null;
  readonly attempts: AttemptRecord[] = [];
  /** The route's pattern (`/v1/images/generations/:id`) when the HTTP layer knows it: the span's name (http.route). */
  route: string | null = null;
  /** What the tracer keeps for this request (its span); nobody else reads it. */
  tracing: unknown = undefined;
  /** How the request ended: set by `RequestTrails.finish`, before the observers' `finished`. */
  end: TrailEnd | null = null;

  constructor(
    readonly id: string,
    readonly method: string,
    readonly path: string,
    private readonly observer: TrailObserver | null,
  ) {}

  /** ms since the request started. */
  now(): number {
    return performance.now() - this.t0;
  }

  /**
   * An upstream attempt starts. The handle's `headers` go with the upstream call (the tracer's
   * `traceparent`); `succeeded`/`failed` end it, `failedLate` marks a stream that broke after its
   * first event.
   */
  attempt(start: AttemptStart): AttemptHandle {
    const at = this.now();
    const record: AttemptRecord = { ...start, startMs: Math.round(at), ms: null, status: null, failure: null };
    this.attempts.push(record);
    const watcher = this.observer?.attempt?.(this, start, at);
    return new AttemptHandle(this, record, at, watcher);
  }

  /** A billing phase took from `startMs` to now (both from `now()`). */
  phase(phase: Phase, startMs: number, failed = false): void {
    this.observer?.phase?.(this, phase, startMs, this.now(), failed);
  }
}

export class AttemptHandle {
  constructor(
    private readonly trail: RequestTrail,
    private readonly record: AttemptRecord,
    private readonly at: number,
    private readonly watcher: AttemptWatcher | undefined,
  ) {}

  /** Headers the upstream call carries (W3C trace context); undefined when nothing is traced. */
  get headers(): Record<string, string> | undefined {
    return this.watcher?.headers;
  }

  succeeded(): void {
    const now = this.trail.now();
    this.record.ms = Math.round(now - this.at);
    if (this.trail.firstTokenMs === null) this.trail.firstTokenMs = Math.round(now);
    this.watcher?.end({ status: null, failure: null }, now);
  }

  failed(status: number | null, failure: string): void {
    const now = this.trail.now();
    this.record.ms = Math.round(now - this.at);
    this.record.status = status;
    this.record.failure = failure;
    this.watcher?.end({ status, failure }, now);
  }

  /** The attempt had answered (a stream's first event), then broke. */
  failedLate(status: number | null, failure: string): void {
    this.record.lateFailure = failure;
    if (status) this.record.status = status;
    this.watcher?.late?.(status, failure, this.trail.now());
  }
}

/** The open trails of this process, by request id. */
export class RequestTrails {
  private readonly open = new Map<string, RequestTrail>();

  constructor(private observer: TrailObserver | null = null) {}

  /** The tracer, set once at start-up when tracing is on. */
  observe(observer: TrailObserver): void {
    this.observer = observer;
  }

  /** Whether a tracer watches (trails are then made even when the request log is off). */
  get observed(): boolean {
    return this.observer !== null;
  }

  start(id: string, method: string, path: string, headers: Readonly<Record<string, string | string[] | undefined>>): RequestTrail {
    const trail = new RequestTrail(id, method, path, this.observer);
    this.open.set(id, trail);
    this.observer?.opened?.(trail, headers);
    return trail;
  }

  get(id: string | undefined): RequestTrail | undefined {
    return id === undefined ? undefined : this.open.get(id);
  }

  finish(trail: RequestTrail, outcome: TrailEnd): void {
    if (this.open.get(trail.id) !== trail) return;
    this.open.delete(trail.id);
    trail.end = outcome;
    try {
      this.observer?.finished?.(trail);
    } catch {
      // A tracer's failure never costs the request log its record.
    }
  }

  get size(): number {
    return this.open.size;
  }
}

/** How a request ended, from the HTTP layer. */
export type TrailEnd = {
  status: number;
  errorCode: string | null;
  /** The client went away before the answer ended. */
  aborted: boolean;
  totalMs: number;
  warnings: string[];
  principal: { keyId: string | null; userId: string | null; appId: string | null } | null;
};
