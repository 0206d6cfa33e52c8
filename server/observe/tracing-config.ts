// What the OTEL_* variables ask of the tracer, read from the gateway's environment (the `env` given
// to startGateway) by the rules of the OpenTelemetry specification and of the JS SDK, which reads
// them the same way from process.env. Read here rather than left to the SDK because the SDK reads
// only process.env, and a gateway started with another environment (a test, an embedding) must get
// what that environment says. What only tunes the transport (certificates, compression, span limits)
// the SDK still reads itself (docs/observability.md). Pure: no OpenTelemetry import, so that a gateway
// without tracing loads none.

export type TraceProtocol = 'http/protobuf' | 'http/json';

export type SamplerSetting = { name: 'always_on' | 'always_off' | 'traceidratio' | 'parentbased_always_on' | 'parentbased_always_off' | 'parentbased_traceidratio'; ratio: number };

export type TraceSettings = {
  protocol: TraceProtocol;
  /** Where spans are posted: the traces endpoint as given, or the endpoint + `v1/traces`. */
  url: string;
  /** OTEL_EXPORTER_OTLP_HEADERS then OTEL_EXPORTER_OTLP_TRACES_HEADERS (`k=v,k2=v2`, percent-encoded), unparsed. */
  headers: string[];
  timeoutMillis?: number;
  serviceName: string | undefined;
  /** OTEL_RESOURCE_ATTRIBUTES, unparsed (same `k=v` list as the headers). */
  resourceAttributes: string | undefined;
  sampler: SamplerSetting;
  /** The batch span processor's OTEL_BSP_* settings that this environment sets. */
  batch: { scheduledDelayMillis?: number; maxQueueSize?: number; maxExportBatchSize?: number; exportTimeoutMillis?: number };
  /** What was set wrong and replaced by the default (said once at start-up). */
  warnings: string[];
};

/** The spec's value of a variable: unset and blank are the same. */
const read = (env: NodeJS.ProcessEnv, name: string): string | undefined => {
  const v = env[name]?.trim();
  return v ? v : undefined;
};

const number = (env: NodeJS.ProcessEnv, name: string): number | undefined => {
  const v = read(env, name);
  if (v === undefined) return undefined;
  const n = Number(v);
  return Number.isFinite(n) ? n : undefined;
};

const SAMPLERS: SamplerSetting['name'][] = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'];

/** OTEL_TRACES_SAMPLER / _ARG as the SDK reads them: parentbased_always_on by default; a ratio outside 0..1 is 1. */
function samplerOf(env: NodeJS.ProcessEnv, warnings: string[]): SamplerSetting {
  const given = read(env, 'OTEL_TRACES_SAMPLER');
  let name: SamplerSetting['name'] = 'parentbased_always_on';
  if (given && (SAMPLERS as string[]).includes(given)) name = given as SamplerSetting['name'];
  else if (given) warnings.push(`OTEL_TRACES_SAMPLER '${given}' is not one of ${SAMPLERS.join(', ')}: parentbased_always_on is used`);
  let ratio = 1;
  if (name.endsWith('traceidratio')) {
    const arg = number(env, 'OTEL_TRACES_SAMPLER_ARG');
    if (arg !== undefined && arg >= 0 && arg <= 1) ratio = arg;
    else warnings.push(`OTEL_TRACES_SAMPLER_ARG ${read(env, 'OTEL_TRACES_SAMPLER_ARG') ?? '(unset)'} is not a ratio from 0 to 1: 1 is used`);
  }
  return { name, ratio };
}

/** The exporter's URL, as the SDK makes it: the traces endpoint as it is, else the endpoint + `v1/traces`. */
function urlOf(env: NodeJS.ProcessEnv): string | { off: string } {
  const traces = read(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const base = read(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  const given = traces ?? base!;
  let url: URL;
  try {
    url = new URL(given);
  } catch {
    return { off: `traces: ${traces ? 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' : 'OTEL_EXPORTER_OTLP_ENDPOINT'} is not a URL: no traces are sent` };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { off: `traces: the OTLP endpoint must be an http:// or https:// URL (OTLP over HTTP): no traces are sent` };
  if (traces) return url.toString();
  return (given.endsWith('/') ? given : `${given}/`) + 'v1/traces';
}

/**
 * The tracer's settings, or null when tracing is off (no OTLP endpoint, OTEL_SDK_DISABLED,
 * OTEL_TRACES_EXPORTER=none), or `{ off }` with why when the variables ask for what cannot be done
 * (gRPC, another exporter): the gateway says so and runs without traces rather than not at all.
 */
export function traceSettings(env: NodeJS.ProcessEnv): TraceSettings | { off: string } | null {
  if (!read(env, 'OTEL_EXPORTER_OTLP_ENDPOINT') && !read(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT')) return null;
  if (read(env, 'OTEL_SDK_DISABLED')?.toLowerCase() === 'true') return null;
  const exporters = (read(env, 'OTEL_TRACES_EXPORTER') ?? 'otlp').split(',').map((e) => e.trim());
  if (exporters.includes('none')) return null;
  const other = exporters.filter((e) => e !== 'otlp');
  if (other.length) return { off: `traces: OTEL_TRACES_EXPORTER '${other.join(',')}' is not supported (only otlp): no traces are sent` };
  const protocol = read(env, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') ?? read(env, 'OTEL_EXPORTER_OTLP_PROTOCOL') ?? 'http/protobuf';
  if (protocol !== 'http/protobuf' && protocol !== 'http/json') {
    return { off: `traces: OTEL_EXPORTER_OTLP_PROTOCOL '${protocol}' is not supported: use http/protobuf (the default, port 4318) or http/json; no traces are sent` };
  }
  const url = urlOf(env);
  if (typeof url !== 'string') return url;
  const warnings: string[] = [];
  const timeout = number(env, 'OTEL_EXPORTER_OTLP_TRACES_TIMEOUT') ?? number(env, 'OTEL_EXPORTER_OTLP_TIMEOUT');
  return {
    protocol,
    url,
    headers: [read(env, 'OTEL_EXPORTER_OTLP_HEADERS'), read(env, 'OTEL_EXPORTER_OTLP_TRACES_HEADERS')].filter((h): h is string => h !== undefined),
    ...(timeout !== undefined && timeout > 0 ? { timeoutMillis: timeout } : {}),
    serviceName: read(env, 'OTEL_SERVICE_NAME'),
    resourceAttributes: read(env, 'OTEL_RESOURCE_ATTRIBUTES'),
    sampler: samplerOf(env, warnings),
    batch: {
      scheduledDelayMillis: number(env, 'OTEL_BSP_SCHEDULE_DELAY'),
      maxQueueSize: number(env, 'OTEL_BSP_MAX_QUEUE_SIZE'),
      maxExportBatchSize: number(env, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE'),
      exportTimeoutMillis: number(env, 'OTEL_BSP_EXPORT_TIMEOUT'),
    },
    warnings,
  };
}
