// OpenTelemetry traces (docs/observability.md "Traces", docs/decisions/0031): when an OTLP endpoint
// is set, every request's trail becomes a span tree, exported in batches over OTLP/HTTP (protobuf or
// JSON). A SERVER span per request (the client's `traceparent` its parent), a CLIENT span per
// upstream attempt (its context sent upstream as `traceparent`), a span per quota phase; a job run
// is a span of its own with its attempts below it.
//
// Zero cost when unset: this file imports no OpenTelemetry module statically (types only); the SDK
// is imported inside startTracing, after the check, and no observer is set on the trails, so the
// request path pays one null check per hook. The SDK is never registered globally either: nothing
// else in the process (Prisma, the vendors' SDKs) starts emitting spans because tracing is on.
//
// What goes in a span is named here and nowhere else: ids, models, providers, statuses, failure
// classes, token counts. Never a body, a prompt, a key, a header value or a query string.
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Attributes, Context, HrTime, Span } from '@opentelemetry/api';
import type { AttemptStart, AttemptWatcher, RequestTrail, RequestTrails, TrailObserver } from './request-trail.ts';
import { traceSettings, type SamplerSetting } from './tracing-config.ts';

export type Tracing = {
  /** Ends the export: spans still queued are sent first (SIGTERM, close). */
  shutdown(): Promise<void>;
};

/**
 * What the tracer is told of a configured provider: its `gen_ai.provider.name` (the conventions'
 * well-known value its vendor declares; none: the provider's id, as for an OpenAI-compatible
 * server, whose wire format names no provider) and where it is (server.address).
 */
export type UpstreamInfo = { name?: string; baseUrl?: string };

export type TracingOptions = {
  /** service.version. */
  version?: string;
  upstream?: (providerId: string) => UpstreamInfo | undefined;
};

/**
 * What a trail's `tracing` holds: its span, the context its children start in, and `at`, the
 * trail's times (ms from its start) as the span times of all its spans. One time base for the
 * whole tree: the SDK turns a performance.now() time into wall-clock time with an offset of its
 * own per span, read from Date.now() (whole ms), so two spans of one request given times
 * microseconds apart could land in the wrong order, a phase starting before the attempt it
 * follows ended (decision 0031).
 */
type Traced = { span: Span; ctx: Context; at: (ms: number) => HrTime };
const tracedOf = (trail: RequestTrail) => trail.tracing as Traced | undefined;

// GenAI attributes by name: the semantic-conventions package marks them deprecated there (they
// moved to the GenAI conventions' own repository), the names themselves are current.
const GEN_AI = {
  operation: 'gen_ai.operation.name',
  provider: 'gen_ai.provider.name',
  /** Replaced by gen_ai.provider.name (semconv 1.37); still what many backends group by, so both are set. */
  system: 'gen_ai.system',
  requestModel: 'gen_ai.request.model',
  responseModel: 'gen_ai.response.model',
  stream: 'gen_ai.request.stream',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  cachedTokens: 'gen_ai.usage.cache_read.input_tokens',
  reasoningTokens: 'gen_ai.usage.reasoning.output_tokens',
  firstChunk: 'gen_ai.response.time_to_first_chunk',
} as const;

/** The path without its query string (it may hold keys: Gemini's `?key=`). */
const pathOnly = (path: string) => {
  const q = path.indexOf('?');
  return q < 0 ? path : path.slice(0, q);
};

/**
 * Starts exporting traces when the environment asks for them: sets the trails' observer and
 * returns the exporter's shutdown. Null when tracing is off (nothing imported, nothing observed).
 */
export async function startTracing(env: NodeJS.ProcessEnv, trails: RequestTrails, logger: Pick<Logger, 'info' | 'warn'>, options: TracingOptions = {}): Promise<Tracing | null> {
  const settings = traceSettings(env);
  if (settings === null) return null;
  if ('off' in settings) {
    logger.warn(settings.off);
    return null;
  }
  for (const warning of settings.warnings) logger.warn(`traces: ${warning}`);

  const [api, core, sdk, resources, semconv, Exporter] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/core'),
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/semantic-conventions'),
    settings.protocol === 'http/json'
      ? import('@opentelemetry/exporter-trace-otlp-http').then((m) => m.OTLPTraceExporter)
      : import('@opentelemetry/exporter-trace-otlp-proto').then((m) => m.OTLPTraceExporter),
  ]);
  const { SpanKind, SpanStatusCode, ROOT_CONTEXT, trace, defaultTextMapGetter, defaultTextMapSetter } = api;

  // The SDK's own complaints (an export that failed: the collector is away) reach the log, at most
  // one a minute: a collector that is down must not flood the gateway's log.
  let saidAt = -Infinity;
  const say = (message: string, ...args: unknown[]) => {
    if (performance.now() - saidAt < 60_000) return;
    saidAt = performance.now();
    logger.warn(`traces: ${[message, ...args.map((a) => (a instanceof Error ? a.message : String(a)))].join(' ')}`);
  };
  const quiet = () => {};
  api.diag.setLogger({ error: say, warn: say, info: quiet, debug: quiet, verbose: quiet }, { logLevel: api.DiagLogLevel.WARN, suppressOverrideMessage: true });

  const sampler = samplerOf(sdk, settings.sampler);
  const headers = Object.assign({}, ...settings.headers.map((h) => core.parseKeyPairsIntoRecord(h))) as Record<string, string>;
  const exporter = new Exporter({ url: settings.url, headers, ...(settings.timeoutMillis ? { timeoutMillis: settings.timeoutMillis } : {}) });
  const given = settings.resourceAttributes ? core.parseKeyPairsIntoRecord(settings.resourceAttributes) : {};
  const resource = resources.defaultResource().merge(
    resources.resourceFromAttributes({
      ...given,
      [semconv.ATTR_SERVICE_NAME]: settings.serviceName ?? given[semconv.ATTR_SERVICE_NAME] ?? 'model-gateway',
      ...(options.version ? { [semconv.ATTR_SERVICE_VERSION]: options.version } : {}),
      // Instances and `--workers` processes export under one service name: this tells them apart.
      'service.instance.id': given['service.instance.id'] ?? `${hostname()}:${process.pid}`,
    }),
  );
  const provider = new sdk.BasicTracerProvider({ resource, sampler, spanProcessors: [new sdk.BatchSpanProcessor(exporter, settings.batch)] });
  const tracer = provider.getTracer('model-gateway', options.version);
  const propagator = new core.W3CTraceContextPropagator();

  // Each provider's name and address, worked out once.
  const upstreams = new Map<string, Attributes>();
  const upstreamAttributes = (providerId: string): Attributes => {
    let a = upstreams.get(providerId);
    if (a) return a;
    const info = options.upstream?.(providerId);
    const name = info?.name || providerId;
    a = { [GEN_AI.provider]: name, [GEN_AI.system]: name, 'gateway.provider': providerId };
    if (info?.baseUrl) {
      try {
        const u = new URL(info.baseUrl);
        a[semconv.ATTR_SERVER_ADDRESS] = u.hostname.replace(/^\[|\]$/g, '');
        a[semconv.ATTR_SERVER_PORT] = u.port ? Number(u.port) : u.protocol === 'https:' ? 443 : 80;
      } catch {
        // No address then: the config's URLs are checked at start-up; a span goes without.
      }
    }
    upstreams.set(providerId, a);
    return a;
  };
  // The route's (or job kind's) operation, set on the trail from the matched route: an attempt runs only once a route has.
  const operationOf = (trail: RequestTrail) => trail.operation ?? trail.capability ?? 'chat';

  // The trail's times on the wall clock, from one reading of it: the trail's start in ms since the
  // epoch, then its offsets added (a float add is monotonic, so their order is kept).
  const timeBase = (trail: RequestTrail) => {
    const origin = Date.now() - performance.now() + trail.t0;
    return (ms: number) => core.millisToHrTime(origin + ms);
  };

  const observer: TrailObserver = {
    opened(trail, requestHeaders) {
      const at = timeBase(trail);
      if (trail.method === 'JOB') {
        // A job run starts a trace of its own: it runs long after (and apart from) its submission.
        const span = tracer.startSpan('gateway.job.run', { kind: SpanKind.INTERNAL, startTime: at(0), attributes: { 'gateway.job.id': trail.id, 'gateway.job.kind': trail.path } }, ROOT_CONTEXT);
        trail.tracing = { span, ctx: trace.setSpan(ROOT_CONTEXT, span), at } satisfies Traced;
        return;
      }
      const parent = propagator.extract(ROOT_CONTEXT, requestHeaders, defaultTextMapGetter);
      const path = pathOnly(trail.path);
      const span = tracer.startSpan(
        `${trail.method} ${path}`,
        { kind: SpanKind.SERVER, startTime: at(0), attributes: { [semconv.ATTR_HTTP_REQUEST_METHOD]: trail.method, [semconv.ATTR_URL_PATH]: path, 'gateway.request_id': trail.id } },
        parent,
      );
      trail.tracing = { span, ctx: trace.setSpan(parent, span), at } satisfies Traced;
    },

    attempt(trail, start: AttemptStart, atMs): AttemptWatcher | undefined {
      const traced = tracedOf(trail);
      if (!traced) return undefined;
      const operation = operationOf(trail);
      const upstreamModel = start.upstreamModel ?? start.model;
      const attributes: Attributes = { ...upstreamAttributes(start.provider), [GEN_AI.operation]: operation, [GEN_AI.requestModel]: upstreamModel };
      if (start.key !== null) attributes['gateway.provider.key'] = start.key;
      const span = tracer.startSpan(`${operation} ${upstreamModel}`, { kind: SpanKind.CLIENT, startTime: traced.at(atMs), attributes }, traced.ctx);
      const headers: Record<string, string> = {};
      propagator.inject(trace.setSpan(traced.ctx, span), headers, defaultTextMapSetter);
      return {
        headers,
        end(outcome, endMs) {
          if (outcome.failure !== null) {
            span.setAttribute(semconv.ATTR_ERROR_TYPE, outcome.failure);
            if (outcome.status) span.setAttribute(semconv.ATTR_HTTP_RESPONSE_STATUS_CODE, outcome.status);
            span.setStatus({ code: SpanStatusCode.ERROR });
          }
          span.end(traced.at(endMs));
        },
        late(status, failure, lateMs) {
          // The attempt's span ended when it answered; the break is the request's to show.
          traced.span.addEvent('gateway.upstream.failed_late', { [semconv.ATTR_ERROR_TYPE]: failure, 'gateway.provider': start.provider, ...(status ? { [semconv.ATTR_HTTP_RESPONSE_STATUS_CODE]: status } : {}) }, traced.at(lateMs));
          traced.span.setAttribute(semconv.ATTR_ERROR_TYPE, failure);
          traced.span.setStatus({ code: SpanStatusCode.ERROR });
        },
      };
    },

    phase(trail, phase, startMs, endMs, failed) {
      const traced = tracedOf(trail);
      if (!traced) return;
      const span = tracer.startSpan(`gateway.${phase}`, { kind: SpanKind.INTERNAL, startTime: traced.at(startMs) }, traced.ctx);
      if (failed) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end(traced.at(endMs));
    },

    finished(trail) {
      const traced = tracedOf(trail);
      const end = trail.end;
      if (!traced || !end) return;
      const span = traced.span;
      if (span.isRecording()) {
        const job = trail.method === 'JOB';
        const a: Attributes = {};
        if (!job) a[semconv.ATTR_HTTP_RESPONSE_STATUS_CODE] = end.status;
        // Named by the route's pattern once known: one name for all jobs' polls, not one per id.
        if (!job && trail.route) {
          a[semconv.ATTR_HTTP_ROUTE] = trail.route;
          if (trail.route !== pathOnly(trail.path)) span.updateName(`${trail.method} ${trail.route}`);
        }
        if (trail.model) a[GEN_AI.requestModel] = trail.model;
        if (trail.clientRequestId) a['gateway.client_request_id'] = trail.clientRequestId;
        if (trail.responseModel) a[GEN_AI.responseModel] = trail.responseModel;
        if (trail.capability) a['gateway.endpoint'] = trail.capability;
        if (trail.format) a['gateway.format'] = trail.format;
        if (trail.stream) a[GEN_AI.stream] = true;
        if (trail.firstTokenMs !== null && trail.stream) a[GEN_AI.firstChunk] = trail.firstTokenMs / 1000;
        const u = trail.usage;
        if (u) {
          a[GEN_AI.inputTokens] = u.inputTokens;
          a[GEN_AI.outputTokens] = u.outputTokens;
          a['gateway.usage.billed_tokens'] = u.billedTokens;
          if (u.cachedTokens) a[GEN_AI.cachedTokens] = u.cachedTokens;
          if (u.reasoningTokens) a[GEN_AI.reasoningTokens] = u.reasoningTokens;
        }
        if (trail.attempts.length) a['gateway.upstream.attempts'] = trail.attempts.length;
        if (end.aborted) a['gateway.client_aborted'] = true;
        if (end.errorCode) a['gateway.error.code'] = end.errorCode;
        // A server span is an error when the gateway (or its upstreams) failed: 5xx, not a client's 4xx.
        // A job that failed failed whatever its status.
        if (end.status >= 500 || (job && end.errorCode)) {
          a[semconv.ATTR_ERROR_TYPE] = end.errorCode ?? String(end.status);
          span.setStatus({ code: SpanStatusCode.ERROR });
        }
        span.setAttributes(a);
      }
      span.end(traced.at(trail.now()));
    },
  };
  trails.observe(observer);
  logger.info(`traces: OTLP ${settings.protocol} to ${redactedUrl(settings.url)}${settings.sampler.name === 'parentbased_always_on' ? '' : ` (sampler ${settings.sampler.name}${settings.sampler.name.endsWith('ratio') ? ` ${settings.sampler.ratio}` : ''})`}`);

  return {
    async shutdown() {
      // Spans of requests still open are lost with the process; those ended are sent now.
      await provider.shutdown().catch((err: unknown) => logger.warn(`traces: the last spans could not be sent: ${err instanceof Error ? err.message : String(err)}`));
    },
  };
}

type SamplerModule = Pick<typeof import('@opentelemetry/sdk-trace-base'), 'AlwaysOnSampler' | 'AlwaysOffSampler' | 'ParentBasedSampler' | 'TraceIdRatioBasedSampler'>;

/** The SDK's sampler for OTEL_TRACES_SAMPLER / _ARG (as its own env reading builds it). */
function samplerOf(sdk: SamplerModule, s: SamplerSetting) {
  const root = s.name.endsWith('always_off') ? new sdk.AlwaysOffSampler() : s.name.endsWith('traceidratio') ? new sdk.TraceIdRatioBasedSampler(s.ratio) : new sdk.AlwaysOnSampler();
  return s.name.startsWith('parentbased_') ? new sdk.ParentBasedSampler({ root }) : root;
}

/** The endpoint for the log: without credentials a URL may carry. */
function redactedUrl(url: string): string {
  const u = new URL(url);
  u.username = '';
  u.password = '';
  u.search = '';
  return u.toString();
}
