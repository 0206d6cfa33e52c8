// OpenTelemetry traces (issue 36, docs/observability.md "Traces"): a gateway with an OTLP endpoint
// exports, to a local receiver, one SERVER span per request (the client's traceparent its parent),
// a CLIENT span per upstream attempt (sent upstream as traceparent), the quota phases, and a span
// per job run; with the exact attributes, and never a prompt, a key or a query string. Without the
// variable nothing is loaded or observed.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { pollJob, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { startFakeUpstreams, type FakeUpstreams } from '../helpers/fake-upstreams.ts';
import { startFakeMedia, type FakeMedia } from '../media/fake-media.ts';
import { RequestTrails } from '../../server/observe/request-trail.ts';
import { startTracing } from '../../server/observe/tracing.ts';
import { traceSettings } from '../../server/observe/tracing-config.ts';

type Export = { path: string; headers: IncomingHttpHeaders; body: Buffer };
type AnyValue = { stringValue?: string; intValue?: number | string; boolValue?: boolean; doubleValue?: number };
type OtlpSpan = {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: { key: string; value: AnyValue }[];
  events?: { name: string }[];
  status?: { code?: number };
};
/** A span as the tests read it: attributes as plain values. */
type SpanView = Omit<OtlpSpan, 'attributes'> & { attributes: Record<string, string | number | boolean> };

const SERVER = 2;
const CLIENT = 3;
const INTERNAL = 1;
const ERROR = 2;

/** A collector's OTLP/HTTP endpoint: keeps every export as it came. */
async function startReceiver(): Promise<{ url: string; exports: Export[]; close(): Promise<void> }> {
  const exports: Export[] = [];
  const server: Server = createServer((req, res) => void (async () => {
    const parts: Buffer[] = [];
    for await (const c of req) parts.push(c as Buffer);
    let body = Buffer.concat(parts);
    if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
    exports.push({ path: req.url ?? '', headers: req.headers, body });
    const json = String(req.headers['content-type']).startsWith('application/json');
    res.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' });
    res.end(json ? '{}' : undefined);
  })());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, exports, close: () => new Promise((r) => server.close(() => r())) };
}

const valueOf = (v: AnyValue) => v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.boolValue ?? v.doubleValue!));

function spansOf(exports: Export[]): SpanView[] {
  const spans: SpanView[] = [];
  for (const e of exports) {
    const doc = JSON.parse(e.body.toString('utf8')) as { resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[] };
    for (const rs of doc.resourceSpans) for (const ss of rs.scopeSpans) for (const s of ss.spans) spans.push({ ...s, attributes: Object.fromEntries(s.attributes.map((a) => [a.key, valueOf(a.value)])) });
  }
  return spans;
}

async function until<T>(what: () => T, done: (v: T) => boolean, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = what();
    if (done(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 25));
  }
}

const hex = (n: number) => Array.from({ length: n }, () => Math.floor(Math.random() * 16).toString(16)).join('');
/** A client's W3C trace context. */
const clientContext = () => ({ traceId: hex(32), spanId: hex(16) });
const traceparentOf = (c: { traceId: string; spanId: string }) => `00-${c.traceId}-${c.spanId}-01`;
/** `traceparent` sent upstream: its trace id and parent (span) id. */
const parsed = (tp: unknown) => {
  const m = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/.exec(String(tp));
  return m ? { traceId: m[1], parentId: m[2] } : null;
};

const PROMPT = 'the-prompt-canary-7f3a9 must never be in a span';
const QUERY_SECRET = 'query-canary-51d2';

const config = (text: string, media: string) => `
providers:
  - { id: openai, type: openai, base_url: "${text}/v1", api_key: sk-openai-secret }
  - { id: claude, type: anthropic, base_url: "${text}/v1", api_key: sk-ant-secret }
  - { id: images, type: openai, base_url: "${media}/openai/v1", api_key: openai-key }
models:
  - { id: chat-model, endpoint: chat, upstreams: [{ provider: openai, model: text-model }] }
  - id: failover-model
    endpoint: chat
    upstreams: [{ provider: openai, model: fail500-model }, { provider: claude, model: text-model }]
  - { id: broken-stream, endpoint: chat, upstreams: [{ provider: openai, model: miderror-model }] }
  - { id: gpt-image-1, endpoint: images, upstreams: [{ provider: images, model: gpt-image-1 }] }
plans:
  - { id: free, rank: 0, daily_tokens: 1000000, requests_per_minute: 1000, max_concurrent_jobs: 4 }
key_cache_ttl_ms: 500
jobs: { retention_hours: 1, poll_seconds: 0.05, sync_timeout_seconds: 5 }
`;

describe('traces over OTLP http/json', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let fake: FakeUpstreams;
  let media: FakeMedia;
  let gw: TestGateway;
  let key: string;

  beforeAll(async () => {
    [receiver, fake, media] = await Promise.all([startReceiver(), startFakeUpstreams(), startFakeMedia()]);
    gw = await startTestGateway({
      config: config(fake.url, media.url),
      env: {
        JOB_POLL_MS: '25',
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_EXPORTER_OTLP_HEADERS: 'x-collector-token=c0llect%20me',
        OTEL_BSP_SCHEDULE_DELAY: '50',
      },
    });
    key = await gw.newKey();
  });
  afterAll(async () => {
    await gw?.close();
    await Promise.all([fake?.close(), media?.close(), receiver?.close()]);
  });

  /** The spans of one trace, once `done` holds for them. */
  const trace = (traceId: string, done: (spans: SpanView[]) => boolean) =>
    until(
      () => spansOf(receiver.exports).filter((s) => s.traceId === traceId),
      done,
    );

  it('a chat completion: request span under the client span, its attempt and quota spans under it, the attempt sent upstream', async () => {
    const client = clientContext();
    const res = await gw.fetch(`/v1/chat/completions?probe=${QUERY_SECRET}`, {
      method: 'POST',
      key,
      headers: { traceparent: traceparentOf(client), tracestate: 'vendor=opaque-1' },
      json: { model: 'chat-model', messages: [{ role: 'user', content: PROMPT }] },
    });
    expect(res.status).toBe(200);
    const requestId = res.headers.get('x-request-id');
    const body = (await res.json()) as { usage: { prompt_tokens: number; completion_tokens: number } };

    const spans = await trace(client.traceId, (s) => s.some((x) => x.kind === SERVER) && s.some((x) => x.name === 'gateway.quota.settle'));
    const request = spans.find((s) => s.kind === SERVER)!;
    expect(request).toMatchObject({ name: 'POST /v1/chat/completions', parentSpanId: client.spanId });
    expect(request.attributes).toEqual({
      'http.request.method': 'POST',
      'url.path': '/v1/chat/completions',
      'http.route': '/v1/chat/completions',
      'http.response.status_code': 200,
      'gateway.request_id': requestId,
      'gen_ai.request.model': 'chat-model',
      'gen_ai.response.model': 'text-model',
      'gen_ai.usage.input_tokens': body.usage.prompt_tokens,
      'gen_ai.usage.output_tokens': body.usage.completion_tokens,
      'gateway.usage.billed_tokens': body.usage.prompt_tokens + body.usage.completion_tokens,
      'gateway.upstream.attempts': 1,
      'gateway.endpoint': 'chat',
      'gateway.format': 'openai',
    });
    expect(request.status?.code ?? 0).not.toBe(ERROR);

    const children = spans.filter((s) => s.parentSpanId === request.spanId);
    expect(children.map((s) => s.name).sort()).toEqual(['chat text-model', 'gateway.quota.admit', 'gateway.quota.settle']);
    const attempt = children.find((s) => s.kind === CLIENT)!;
    expect(attempt.attributes).toEqual({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.system': 'openai',
      'gen_ai.request.model': 'text-model',
      'gateway.provider': 'openai',
      'server.address': '127.0.0.1',
      'server.port': Number(new URL(fake.url).port),
    });
    for (const phase of children.filter((s) => s.kind === INTERNAL)) {
      expect(BigInt(phase.startTimeUnixNano)).toBeGreaterThanOrEqual(BigInt(request.startTimeUnixNano));
      expect(BigInt(phase.endTimeUnixNano)).toBeGreaterThanOrEqual(BigInt(phase.startTimeUnixNano));
    }
    // Admission before the attempt, settlement after it.
    const admit = children.find((s) => s.name === 'gateway.quota.admit')!;
    const settle = children.find((s) => s.name === 'gateway.quota.settle')!;
    expect(BigInt(admit.endTimeUnixNano)).toBeLessThanOrEqual(BigInt(attempt.startTimeUnixNano));
    expect(BigInt(settle.startTimeUnixNano)).toBeGreaterThanOrEqual(BigInt(attempt.endTimeUnixNano));

    // The upstream got the attempt's context (and the client's tracestate), nothing of the client's span.
    const upstream = fake.requests.findLast((r) => r.body.messages?.[0]?.content === PROMPT)!;
    expect(parsed(upstream.headers.traceparent)).toEqual({ traceId: client.traceId, parentId: attempt.spanId });
    expect(upstream.headers.tracestate).toBe('vendor=opaque-1');
  });

  it('a streamed completion that fails over: one attempt span per try, the failures classed, the answer usage on the request span', async () => {
    const client = clientContext();
    const before = fake.requests.length;
    const res = await gw.fetch('/v1/chat/completions', {
      method: 'POST',
      key,
      headers: { traceparent: traceparentOf(client) },
      json: { model: 'failover-model', messages: [{ role: 'user', content: PROMPT }], stream: true, stream_options: { include_usage: true } },
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    const usage = text
      .split('\n')
      .filter((l) => l.startsWith('data: {'))
      .map((l) => JSON.parse(l.slice(6)) as { usage?: { prompt_tokens: number; completion_tokens: number } })
      .findLast((c) => c.usage)!.usage!;

    const spans = await trace(client.traceId, (s) => s.some((x) => x.kind === SERVER) && s.some((x) => x.name === 'gateway.quota.settle'));
    const request = spans.find((s) => s.kind === SERVER)!;
    expect(request.parentSpanId).toBe(client.spanId);
    expect(request.attributes).toMatchObject({
      'http.response.status_code': 200,
      'gen_ai.request.model': 'failover-model',
      'gen_ai.response.model': 'text-model',
      'gen_ai.request.stream': true,
      'gen_ai.usage.input_tokens': usage.prompt_tokens,
      'gen_ai.usage.output_tokens': usage.completion_tokens,
    });
    expect(request.attributes['gen_ai.response.time_to_first_chunk']).toBeGreaterThan(0);

    const attempts = spans.filter((s) => s.kind === CLIENT).sort((a, b) => Number(BigInt(a.startTimeUnixNano) - BigInt(b.startTimeUnixNano)));
    expect(attempts.length).toBeGreaterThanOrEqual(2);
    expect(request.attributes['gateway.upstream.attempts']).toBe(attempts.length);
    for (const a of attempts) expect(a.parentSpanId).toBe(request.spanId);
    const failed = attempts.slice(0, -1);
    for (const a of failed) {
      expect(a.name).toBe('chat fail500-model');
      expect(a.attributes).toMatchObject({ 'gen_ai.provider.name': 'openai', 'gen_ai.request.model': 'fail500-model', 'http.response.status_code': 500, 'error.type': 'http_500' });
      expect(a.status?.code).toBe(ERROR);
    }
    const answered = attempts.at(-1)!;
    expect(answered.name).toBe('chat text-model');
    expect(answered.attributes).toMatchObject({ 'gen_ai.provider.name': 'anthropic', 'gen_ai.system': 'anthropic', 'gateway.provider': 'claude', 'gen_ai.request.model': 'text-model' });
    expect(answered.attributes['error.type']).toBeUndefined();

    // Each upstream call carried its own attempt's span as parent, in order.
    const calls = fake.requests.slice(before);
    expect(calls.map((c) => parsed(c.headers.traceparent))).toEqual(attempts.map((a) => ({ traceId: client.traceId, parentId: a.spanId })));
  });

  it('a stream that breaks after its first event: the attempt ended as answered, the break an event and error on the request span', async () => {
    const client = clientContext();
    const res = await gw.fetch('/v1/chat/completions', { method: 'POST', key, headers: { traceparent: traceparentOf(client) }, json: { model: 'broken-stream', messages: [{ role: 'user', content: 'hi' }], stream: true } });
    expect(res.status).toBe(200);
    await res.text();
    const spans = await trace(client.traceId, (s) => s.some((x) => x.kind === SERVER) && s.some((x) => x.name === 'gateway.quota.settle'));
    const request = spans.find((s) => s.kind === SERVER)!;
    const attempt = spans.find((s) => s.kind === CLIENT)!;
    expect(attempt.attributes['error.type']).toBeUndefined();
    expect(request.events?.map((e) => e.name)).toEqual(['gateway.upstream.failed_late']);
    // The stream's status was sent (200) before the upstream broke: the failure class says what happened.
    expect(request.attributes).toMatchObject({ 'http.response.status_code': 200, 'error.type': 'http_502' });
    expect(request.status?.code).toBe(ERROR);
  });

  it('an image job: a span per run with its attempt and settlement below it', async () => {
    const res = await gw.fetch('/v1/images/generations', { method: 'POST', key, json: { model: 'gpt-image-1', prompt: PROMPT, sync: false } });
    expect(res.status).toBe(202);
    const job = (await res.json()) as { id: string };
    expect((await pollJob(gw, `/v1/images/generations/${job.id}`, key)).status).toBe('done');

    const all = await until(
      () => spansOf(receiver.exports),
      (s) => s.some((x) => x.name === 'gateway.job.run' && x.attributes['gateway.job.id'] === job.id),
    );
    const run = all.find((x) => x.name === 'gateway.job.run' && x.attributes['gateway.job.id'] === job.id)!;
    expect(run.parentSpanId ?? '').toBe('');
    expect(run.attributes).toMatchObject({ 'gateway.job.id': job.id, 'gateway.job.kind': 'images.generation', 'gen_ai.request.model': 'gpt-image-1', 'gateway.endpoint': 'images' });
    expect(run.attributes['http.response.status_code']).toBeUndefined();
    const spans = await trace(run.traceId, (s) => s.some((x) => x.name === 'gateway.quota.settle'));
    const children = spans.filter((s) => s.parentSpanId === run.spanId);
    expect(children.map((s) => s.name).sort()).toEqual(['gateway.quota.settle', 'images gpt-image-1']);
    const attempt = children.find((s) => s.kind === CLIENT)!;
    expect(attempt.attributes).toMatchObject({ 'gen_ai.operation.name': 'images', 'gen_ai.provider.name': 'openai', 'gateway.provider': 'images', 'gen_ai.request.model': 'gpt-image-1' });
    const upstream = media.requests.findLast((r) => r.path === '/openai/v1/images/generations')!;
    expect(parsed(upstream.headers.traceparent)).toEqual({ traceId: run.traceId, parentId: attempt.spanId });
  });

  it('sends JSON with the configured headers; no span holds the prompt, a key or the query string', async () => {
    expect(receiver.exports.length).toBeGreaterThan(0);
    for (const e of receiver.exports) {
      expect(e.path).toBe('/v1/traces');
      expect(e.headers['content-type']).toBe('application/json');
      expect(e.headers['x-collector-token']).toBe('c0llect me');
      const text = e.body.toString('utf8');
      for (const secret of [PROMPT, 'prompt-canary', QUERY_SECRET, key, key.slice(-12), 'sk-openai-secret', 'sk-ant-secret', 'openai-key']) expect(text).not.toContain(secret);
    }
    const doc = JSON.parse(receiver.exports[0]!.body.toString('utf8')) as { resourceSpans: { resource: { attributes: { key: string; value: AnyValue }[] } }[] };
    const resource = Object.fromEntries(doc.resourceSpans[0]!.resource.attributes.map((a) => [a.key, valueOf(a.value)]));
    expect(resource).toMatchObject({ 'service.name': 'model-gateway', 'service.version': gw.services.version });
  });
});

describe('span times', () => {
  it('one time base per request: a phase after an attempt starts after it, whatever the wall clock reads between them', async () => {
    const receiver = await startReceiver();
    const trails = new RequestTrails();
    const tracing = (await startTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }, trails, { info: () => {}, warn: () => {} }))!;
    // The wall clock read in whole ms, as Date.now() is: here it reads 2 ms less after the first
    // reading (a tick boundary, a step back). The SDK's own conversion of performance.now() times
    // reads it per span, which put the settlement 12 µs before the attempt's end once in CI.
    const wall = Date.now();
    let reads = 0;
    // How long opening the trail took: the time base is read then, so a pause there (a collection) moves it.
    let opening = 0;
    const clock = vi.spyOn(Date, 'now').mockImplementation(() => (reads++ ? wall - 2 : wall));
    try {
      const before = performance.now();
      const trail = trails.start('req_times', 'POST', '/v1/chat/completions', {});
      opening = performance.now() - before;
      const attempt = trail.attempt({ provider: 'openai', key: null, upstreamModel: 'text-model', model: 'chat-model' });
      attempt.succeeded();
      trail.phase('quota.settle', trail.now());
      trails.finish(trail, { status: 200, errorCode: null, aborted: false, totalMs: 1, warnings: [], principal: null });
    } finally {
      clock.mockRestore();
    }
    await tracing.shutdown();
    await receiver.close();
    const spans = spansOf(receiver.exports);
    const [request, call, settle] = ['POST /v1/chat/completions', 'chat text-model', 'gateway.quota.settle'].map((name) => spans.find((s) => s.name === name)!);
    const t = (s: SpanView, end: 'start' | 'end') => BigInt(end === 'start' ? s.startTimeUnixNano : s.endTimeUnixNano);
    expect(t(call!, 'start')).toBeGreaterThanOrEqual(t(request!, 'start'));
    expect(t(settle!, 'start')).toBeGreaterThanOrEqual(t(call!, 'end'));
    expect(t(request!, 'end')).toBeGreaterThanOrEqual(t(settle!, 'end'));
    // On the wall clock as read when the request started: within its 2 ms step here, the ms the
    // nanoseconds are cut to, and however long opening the trail took.
    expect(Math.abs(Number(t(request!, 'start') / 1_000_000n) - wall)).toBeLessThanOrEqual(3 + opening);
  });
});

describe('traces over OTLP http/protobuf (the default protocol)', () => {
  it('posts protobuf to the traces endpoint as given, flushed at close', async () => {
    const receiver = await startReceiver();
    const fake = await startFakeUpstreams();
    const gw = await startTestGateway({
      config: config(fake.url, fake.url),
      env: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/custom/traces`, OTEL_SERVICE_NAME: 'gw-under-test' },
    });
    try {
      const key = await gw.newKey();
      const res = await gw.fetch('/v1/chat/completions', { method: 'POST', key, json: { model: 'chat-model', messages: [{ role: 'user', content: PROMPT }] } });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
      // The upstream is traced although the client sent no context: a new trace.
      expect(parsed(fake.requests.at(-1)!.headers.traceparent)).not.toBeNull();
    } finally {
      // The default batch delay is 5 s: the close flushes what is queued.
      await gw.close();
      await fake.close();
    }
    await receiver.close();
    expect(receiver.exports.length).toBeGreaterThan(0);
    const all = Buffer.concat(receiver.exports.map((e) => e.body));
    for (const e of receiver.exports) {
      expect(e.path).toBe('/custom/traces');
      expect(e.headers['content-type']).toBe('application/x-protobuf');
    }
    // Protobuf keeps strings as their bytes.
    for (const name of ['POST /v1/chat/completions', 'chat text-model', 'gateway.quota.admit', 'gateway.quota.settle', 'gw-under-test']) expect(all.includes(Buffer.from(name))).toBe(true);
    expect(all.includes(Buffer.from('prompt-canary'))).toBe(false);
  });
});

describe('without an OTLP endpoint', () => {
  it('nothing is observed: no settings, no observer', async () => {
    expect(traceSettings({})).toBeNull();
    expect(traceSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' })).toBeNull();
    expect(traceSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_TRACES_EXPORTER: 'none' })).toBeNull();
    const trails = new RequestTrails();
    const warned: string[] = [];
    expect(await startTracing({ OTEL_SERVICE_NAME: 'x' }, trails, { info: () => {}, warn: (m: string) => void warned.push(m) })).toBeNull();
    expect(trails.observed).toBe(false);
    // gRPC is not spoken: said, and the gateway runs without traces.
    expect(await startTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, trails, { info: () => {}, warn: (m: string) => void warned.push(m) })).toBeNull();
    expect(trails.observed).toBe(false);
    expect(warned).toEqual([expect.stringContaining("OTEL_EXPORTER_OTLP_PROTOCOL 'grpc' is not supported")]);
  });

  it('reads the endpoint, headers and sampler as the SDK does', () => {
    const s = traceSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/otlp', OTEL_EXPORTER_OTLP_HEADERS: 'a=1', OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'b=2', OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' });
    expect(s).toMatchObject({ protocol: 'http/protobuf', url: 'http://collector:4318/otlp/v1/traces', headers: ['a=1', 'b=2'], sampler: { name: 'parentbased_traceidratio', ratio: 0.25 }, warnings: [] });
    expect(traceSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://t:9999/x' })).toMatchObject({ url: 'http://t:9999/x' });
    expect(traceSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/', OTEL_TRACES_SAMPLER: 'sometimes' })).toMatchObject({ url: 'http://c:4318/v1/traces', sampler: { name: 'parentbased_always_on' }, warnings: [expect.stringContaining('sometimes')] });
  });

  it('no server module imports OpenTelemetry at load: only types, and the SDK inside startTracing', () => {
    const files = (dir: string): string[] => readdirSync(dir).flatMap((f) => (statSync(path.join(dir, f)).isDirectory() ? files(path.join(dir, f)) : f.endsWith('.ts') ? [path.join(dir, f)] : []));
    const root = new URL('../../server/', import.meta.url).pathname;
    for (const file of files(root)) {
      const src = readFileSync(file, 'utf8');
      const staticImports = src.match(/^import\s+(?!type\b)[^;]*from\s+'@opentelemetry\/[^']+';/gm) ?? [];
      expect(staticImports, path.relative(root, file)).toEqual([]);
    }
  });
});
