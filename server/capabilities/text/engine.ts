// The text-generation request path shared by the chat-completions and Messages endpoints:
// model → targets → (pass through | translate) → failover → JSON or SSE, then settle usage.
import { Readable } from 'node:stream';
import { estimateOutputTokens, estimatePromptTokens, textEstimate } from '../../pipeline/estimate.ts';
import { GatewayError, errors } from '../../runtime/errors.ts';
import type { EventSourceMessage } from 'eventsource-parser';
import { postJson, postStream } from '../../upstream/http.ts';
import { asWire, type JsonObject } from '../../upstream/json.ts';
import { malformed, reportedError, upstreamFailure, type UpstreamError } from '../../upstream/errors.ts';
import { UnsupportedContentError, buildCall, type CallContext, type TextFormat } from '../../providers/types.ts';
import type { Blame, Release, TextTarget as Target } from '../../pipeline/types.ts';
import { imageTokensOf } from '../../providers/registry.ts';
import { redactHeldSecrets } from '../../runtime/held-secrets.ts';
import type { ImageTokenRule } from '../../providers/manifest.ts';
import { UpstreamClock } from '../../pipeline/upstream-clock.ts';
import * as C from '../../translate/canonical.ts';
import { checkStructuredOutput } from '../../translate/structured-output.ts';
import { withClientModel } from '../../translate/model-id.ts';
import { gatewayHeaders } from '../shared/gateway-headers.ts';
import { surfaceOf } from '../../config/capabilities.ts';
import { inlineImages } from './inline-images.ts';
import { fitToModel, type Fitted } from './model-fit.ts';
import { gatewaySearchLoop } from './web-search-loop.ts';
import type { CapabilityDeps } from '../deps.ts';
import type { Drain } from '../../runtime/shutdown.ts';
import type { CallInfo, Caller, StreamedAnswer } from '../descriptor.ts';
import type { ClientCodec, ClientFormat, DecodedText } from './formats.ts';
import { WEB_SEARCH_TOOLS } from '../../translate/responses.ts';

/** A text request as the engine runs it: who calls, in which client format, and what that format decoded. */
export type TextCall = Caller & DecodedText & { format: Pick<ClientFormat<never>, 'endpoint' | 'native'> };

/**
 * `upstreamMs`: time spent waiting on upstreams — each attempt from sending to the last byte of the
 * answer (to the first event, for a stream), failed attempts, backoff, gateway-run search rounds and
 * image downloads included; building requests, decoding and translating answers are the gateway's own time.
 */
export type TextResult = {
  status: 200;
  body: StreamedAnswer['body'];
  headers: Record<string, string>;
  upstreamMs: number;
  /** What translating changed or dropped for the upstream that answered (also in X-Gateway-Warnings). */
  warnings: string[];
};

function callContext(call: TextCall, target: Target, services: CapabilityDeps): CallContext {
  return {
    provider: target.provider,
    clientHeaders: call.clientHeaders,
    defaultMaxTokens: services.catalog.model(call.request.model)?.max_output_tokens ?? undefined,
  };
}

export const isNative = (call: TextCall, target: Target) => target.adapter.format === call.format.native;

/**
 * Who runs the web search a request asks for on this target: the upstream (the request passes
 * through to it, or its translated wire has a search tool), the gateway (a search backend is
 * configured), or nobody (the search tool is stripped). The one place this is decided.
 */
function searchedBy(call: TextCall, target: Target, services: CapabilityDeps): 'upstream' | 'gateway' | null {
  if (!call.request.webSearch) return null;
  if (isNative(call, target) || target.adapter.nativeWebSearch) return 'upstream';
  return services.search !== null ? 'gateway' : null;
}

/** Built-in tools the client asked for that this target cannot run (X-Gateway-Stripped-Tools): none when passed through. */
function strippedTools(call: TextCall, target: Target, services: CapabilityDeps): string[] {
  if (isNative(call, target)) return [];
  const searched = searchedBy(call, target, services) !== null;
  return call.builtIns.filter((b) => !(searched && WEB_SEARCH_TOOLS.has(b)));
}

/**
 * A passed-through chat request with `web_search_options` searches by definition: OpenAI's chat
 * answer does not say whether it did (Responses and Messages upstreams report their searches).
 */
const searchesByDefinition = (call: TextCall) => !!call.request.webSearch && call.format.endpoint === 'chat';

export function upstreamRequest(call: TextCall, target: Target, services: CapabilityDeps, prepared: C.Request) {
  const ctx = callContext(call, target, services);
  if (isNative(call, target)) {
    const where = target.adapter.endpoint({ ...prepared, model: target.upstreamModel }, ctx);
    return { ctx, http: { ...where, body: call.codec.passthroughBody(target.upstreamModel) }, native: true };
  }
  try {
    return { ctx, http: buildCall(target.adapter, { ...prepared, model: target.upstreamModel }, ctx), native: false };
  } catch (err) {
    if (err instanceof UnsupportedContentError) throw errors.invalid(err.message, err.param);
    throw err;
  }
}

/** How a request ended, for its settlement: who answered, what it used, and the status it ended with. */
type Settlement = { target: Target | null; usage: C.Usage | null; estimated: boolean; status: number; errorCode: string | null; webSearch?: boolean };

/** What one attempt produced: a whole answer, or a stream opened up to its first frame for the client. */
type Attempt = { kind: 'whole'; decoded: C.Response; body: Readonly<Record<string, unknown>> | string } | { kind: 'stream'; opened: Opened };

/** Decodes the body in its client format and runs it. */
export async function runFormat<Body>(format: ClientFormat<Body>, deps: CapabilityDeps, body: Body, info: CallInfo): Promise<TextResult> {
  const decoded = await format.decode(body, { headers: info.headers, items: deps.items });
  return runText(deps, { principal: info.principal, requestId: info.requestId, log: info.log, format, ...decoded });
}

export async function runText(services: CapabilityDeps, call: TextCall): Promise<TextResult> {
  const modelId = call.request.model;
  const { pipeline } = services;
  const routed = pipeline.targets(modelId, call.format.endpoint);
  const model = routed.model;
  const fitted = fitToModel(call.request, services.catalog.entry(modelId));
  let targets: Target[] = routed.targets;
  if (call.nativeOnly) {
    targets = targets.filter((t) => isNative(call, t));
    if (!targets.length) throw call.nativeOnly;
  }
  // The hold: every input but text bounded by what the model's upstreams can bill for it (images
  // by their vendors' rules, looked up at the first image), and by the model's context window
  // where nothing else bounds it.
  let images: ImageTokenRule | undefined;
  const most = textEstimate(fitted.request, model, {
    imageTokens: (size, detail) => (images ??= imageTokensOf(targets.map((t) => t.provider.type)))(size, detail),
    contextWindow: services.catalog.entry(modelId)?.context_window,
  });
  const meter = await pipeline.admit({
    requestId: call.requestId,
    principal: call.principal,
    model: modelId,
    endpoint: surfaceOf(call.format.endpoint),
    reserveTokens: most.input + most.output,
    reserveCost: most,
  });
  // Settlement is not awaited: the ledger record is written and the counter updated now (with
  // Redis, sent at the end of this event-loop turn with the turn's others), ahead of any request
  // this instance reads later.
  const settle = (s: Settlement) =>
    void meter
      .settle({ provider: s.target?.provider.id ?? null, upstreamModel: s.target?.upstreamModel ?? null, usage: s.usage, estimated: s.estimated, webSearch: s.webSearch ?? false }, s.status, s.errorCode)
      .catch(() => {});
  const clock = new UpstreamClock();
  const candidates = pipeline.plan(model, targets, { requestId: call.requestId, capability: call.format.endpoint, affinity: fitted.request });
  let inlined: C.Request | null = null;
  // Downloading images is waiting on other hosts, like an upstream call.
  const prepare = async (t: Target) => (t.adapter.needsInlineImages ? (inlined ??= await clock.wait(inlineImages(fitted.request, services))) : fitted.request);

  /** One upstream's answer: gateway search is one more source of it, whole or replayed as a stream. */
  const attempt = async (t: Target): Promise<Attempt> => {
    const request = await prepare(t);
    if (searchedBy(call, t, services) === 'gateway') {
      // The search rounds run to completion first; a stream then replays the answer as events.
      const decoded = await clock.wait(gatewaySearchLoop(services, t, request, callContext(call, t, services)));
      if (!call.request.stream) return { kind: 'whole', decoded, body: call.codec.encodeResponse(decoded, modelId) };
      const acc = new C.ResponseAccumulator();
      const frames = replayFrames(call, decoded, acc);
      return { kind: 'stream', opened: { target: t, first: (await frames.next()).value ?? '', frames, acc, abort: new AbortController() } };
    }
    const { http, ctx, native } = upstreamRequest(call, t, services, request);
    if (!call.request.stream) {
      const { text, json } = await clock.wait(postJson(http));
      const decoded = t.adapter.decode(json, ctx);
      // Passed through, the answer is the client format's own object: only its model is read.
      const answer = asWire<JsonObject>(json);
      if (native && searchesByDefinition(call)) decoded.webSearch = true;
      // Passed through: the upstream's bytes go out as they came, under the model id the client sent
      // (a format without a model field, Gemini's, names its model version: kept as it is).
      const passed = answer.model === undefined ? text : withClientModel(text, answer.model, modelId, () => JSON.stringify({ ...answer, model: modelId }));
      return { kind: 'whole', decoded, body: native ? passed : call.codec.encodeResponse(decoded, modelId) };
    }
    const abort = new AbortController();
    const upstream = await clock.wait(postStream({ ...http, signal: abort.signal }));
    const acc = new C.ResponseAccumulator();
    const frames = native ? nativeFrames(call, t, upstream.events(), acc, ctx) : translatedFrames(call, t, upstream.events(), acc, ctx);
    try {
      // Failover stays possible until the first byte for the client exists.
      let first = await clock.wait(frames.next());
      while (!first.done && !first.value) first = await clock.wait(frames.next());
      // A stream that fails before anything reached the client fails over like a failed status.
      const failed = reportedFailure(acc, t);
      if (failed) throw failed;
      return { kind: 'stream', opened: { target: t, first: first.done ? '' : first.value, frames, acc, abort } };
    } catch (err) {
      abort.abort();
      throw err;
    }
  };

  // The answering key's slot: freed with the settlement, however the request ends.
  let release: Release = () => {};
  try {
    const won = await pipeline.attempt(candidates, attempt, {
      model: modelId,
      requestId: call.requestId,
      log: call.log,
      onBackoff: clock.paused,
      tokens: most.input + most.output,
      stream: Boolean(call.request.stream),
    });
    release = won.release;
    const { value, candidate, blame } = won;
    const warnings = answerWarnings(call, candidate, fitted);
    // The key's concurrency slot and tokens per minute end with the answer (a stream's last event).
    const settleAndRelease = (s: Settlement) => {
      release(s.usage ? s.usage.inputTokens + s.usage.outputTokens : undefined);
      settle(s);
    };
    if (value.kind === 'stream') {
      const body = streamToClient(services, call, value.opened, blame, settleAndRelease);
      const streamType = call.codec.streamContentType ? { 'content-type': call.codec.streamContentType } : {};
      return { status: 200, body, headers: { ...meter.headers, ...STREAM_HEADERS, ...streamType, ...targetHeaders(call, candidate, services, warnings) }, upstreamMs: clock.waitedMs, warnings };
    }
    const { decoded } = value;
    const usage = decoded.usage;
    const answered: Settlement = { target: candidate, usage: usage ?? estimatedUsage(call.request, decoded.content), estimated: !usage, status: 200, errorCode: null, webSearch: decoded.webSearch };
    try {
      checkStructuredOutput(call.request.responseFormat, decoded.content, decoded.finishReason);
    } catch (err) {
      // The tokens were spent: bill them even though the answer is refused.
      settleAndRelease({ ...answered, status: 502, errorCode: (err as GatewayError).code });
      throw err;
    }
    settleAndRelease(answered);
    const json: Record<string, string> = typeof value.body === 'string' ? { 'content-type': 'application/json; charset=utf-8' } : {};
    return { status: 200, body: value.body, headers: { ...meter.headers, ...targetHeaders(call, candidate, services, warnings), ...json }, upstreamMs: clock.waitedMs, warnings };
  } catch (err) {
    // Failed before any output: the reservation is released, nothing is billed.
    const gw = err instanceof GatewayError ? err : null;
    release();
    settle({ target: null, usage: null, estimated: false, status: gw?.status ?? 500, errorCode: gw?.code ?? 'internal_error' });
    throw err;
  }
}

const STREAM_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' };

/** What translating for this target changed or dropped: none when the request was passed through as the client wrote it. */
const answerWarnings = (call: TextCall, target: Target, fitted: Fitted) => (isNative(call, target) ? [] : fitted.warnings(target.adapter));

function targetHeaders(call: TextCall, target: Target, services: CapabilityDeps, warnings: string[]): Record<string, string> {
  const headers = gatewayHeaders(services.pipeline.label(target), warnings);
  const stripped = strippedTools(call, target, services);
  if (stripped.length) headers['x-gateway-stripped-tools'] = stripped.join(', ');
  return headers;
}

function estimatedUsage(req: C.Request, content: C.Response['content']): C.Usage | null {
  const output = estimateOutputTokens(content);
  if (!output) return null; // nothing produced: nothing billed
  return { ...C.emptyUsage(), inputTokens: estimatePromptTokens(req), outputTokens: output };
}

type Opened = { target: Target; first: string; frames: AsyncGenerator<string>; acc: C.ResponseAccumulator; abort: AbortController };

/** The stream's own failure the upstream reported in an event the decoder keeps (Responses' `response.failed`). */
const reportedFailure = (acc: C.ResponseAccumulator, t: Target): UpstreamError | null => (acc.failure ? reportedError(t.provider.id, acc.failure) : null);

/** The opened stream to the client; it settles when the stream ends, however it ends. */
function streamToClient(services: CapabilityDeps, call: TextCall, opened: Opened, blame: Blame, settle: (s: Settlement) => void): Readable {
  return pump(opened, call.codec, services.config.drainMs, call.log, services.drain, (error, clientGone, upstream) => {
    const usage = opened.acc.usage;
    const failure = opened.acc.failure;
    // A real upstream failure after the first event counts against the upstream, like one before it.
    const blamed = upstream ?? (error ? null : reportedFailure(opened.acc, opened.target));
    if (blamed) blame(blamed);
    settle({
      target: opened.target,
      usage: usage ?? estimatedUsage(call.request, opened.acc.content),
      estimated: !usage,
      status: error ? error.status : failure ? 502 : 200,
      errorCode: error ? error.code : failure ? (failure.code ?? 'upstream_error') : clientGone ? 'client_disconnected' : null,
      webSearch: opened.acc.webSearch,
    });
  });
}

/** Canonical events into the accumulator and through the client format's encoder. */
function encoding(call: TextCall, acc: C.ResponseAccumulator) {
  const encoder = call.codec.streamEncoder(call.request.model);
  return {
    feed(events: C.StreamEvent[]): string {
      let out = '';
      for (const e of events) {
        acc.push(e);
        out += encoder.push(e);
      }
      return out;
    },
    /** The closing frames, once the output passed its structured-output check. */
    end(): string {
      checkStructuredOutput(call.request.responseFormat, acc.content, acc.finishReason);
      return encoder.end();
    },
  };
}

/** An upstream event's JSON; bytes that are not JSON are the upstream's failure. */
function eventJson(t: Target, e: EventSourceMessage): JsonObject | null {
  if (e.data === '[DONE]') return null;
  try {
    return JSON.parse(e.data) as JsonObject;
  } catch (err) {
    throw malformed(t.provider.id, 'an event is not JSON', err);
  }
}

async function* translatedFrames(call: TextCall, t: Target, events: AsyncIterable<EventSourceMessage>, acc: C.ResponseAccumulator, ctx: CallContext): AsyncGenerator<string> {
  const decoder = t.adapter.streamDecoder(ctx);
  const enc = encoding(call, acc);
  for await (const e of events) {
    const json = eventJson(t, e);
    const frame = enc.feed(json === null ? decoder.push(e) : decoder.pushParsed(json));
    if (frame) yield frame;
  }
  const tail = enc.feed(decoder.end());
  yield tail + enc.end();
}

async function* replayFrames(call: TextCall, r: C.Response, acc: C.ResponseAccumulator): AsyncGenerator<string> {
  const enc = encoding(call, acc);
  const out = enc.feed(C.responseEvents(r));
  yield out + enc.end();
}

/** An upstream's error event in any format: `{error}` (OpenAI, Gemini), `type: error` (Anthropic), `response.failed` (Responses). */
const carriesError = (json: Record<string, unknown> | null) => json !== null && (json.error !== undefined || json.type === 'error' || json.type === 'response.failed');

async function* nativeFrames(call: TextCall, t: Target, events: AsyncIterable<EventSourceMessage>, acc: C.ResponseAccumulator, ctx: CallContext): AsyncGenerator<string> {
  const decoder = t.adapter.streamDecoder(ctx);
  for await (const e of events) {
    const json = eventJson(t, e);
    const events = json === null ? decoder.push(e) : decoder.pushParsed(json);
    for (const ev of events) acc.push(ev);
    if (searchesByDefinition(call)) acc.webSearch = true;
    // The output is complete at the finish event: check it before that frame goes out.
    if (events.some((ev) => ev.type === 'finish')) checkStructuredOutput(call.request.responseFormat, acc.content, acc.finishReason);
    if (json === null) for (const ev of decoder.end()) acc.push(ev);
    const frame = call.codec.passthroughFrame(e, json, call.request.model);
    // An error the upstream streams goes to the client as it is: never with a secret it echoes (the key it was sent).
    yield carriesError(json) ? redactHeldSecrets(frame) : frame;
  }
  // A decoder may give its last events only at the end: Gemini's usage (running on every chunk)
  // is final once the stream is, so billing it needs them.
  for (const ev of decoder.end()) acc.push(ev);
  const closing = call.codec.passthroughEnd?.();
  if (closing) yield closing;
}

/**
 * Writes frames to the client with backpressure. If the client goes away the upstream is still
 * read (without writing) until it ends or `drainMs` passes, so usage is known; then it is aborted.
 * A failure ends the stream with one error event: the upstream's (502, named by provider and
 * class), or the gateway's own (500 internal_error, logged), never one passed off as the other.
 * A stream still open when a stopping process reaches SHUTDOWN_TIMEOUT_MS is ended the same way,
 * with a 503 server_shutting_down event between two frames, and settled for what it used.
 */
function pump(
  opened: Opened,
  codec: ClientCodec,
  drainMs: number,
  log: TextCall['log'],
  drain: Drain | undefined,
  done: (error: GatewayError | null, clientGone: boolean, upstream: UpstreamError | null) => void,
): Readable {
  let wake: (() => void) | null = null;
  let clientGone = false;
  let finished = false;
  let shutDown: GatewayError | null = null;
  const unhold = drain?.holdStream(() => {
    shutDown = errors.shuttingDown();
    opened.abort.abort(shutDown);
    // A stream paused for a slow client goes on to its next read, which the abort ends.
    wake?.();
  });
  const out = new Readable({
    // Frames waiting for a slow client: a few KiB per stream, then the upstream is paused.
    highWaterMark: 4 * 1024,
    read() {
      wake?.();
    },
  });
  out.on('close', () => {
    if (finished) return;
    clientGone = true;
    wake?.();
    setTimeout(() => opened.abort.abort(), drainMs).unref();
  });
  // No promise unless the client is slow: a stream writes hundreds of frames, and an async
  // function per frame was one promise and one resumption each.
  const write = (frame: string): Promise<void> | undefined => {
    if (clientGone || !frame || out.push(frame)) return undefined;
    return new Promise<void>((r) => (wake = r)).then(() => void (wake = null));
  };
  void (async () => {
    let error: GatewayError | null = null;
    let upstream: UpstreamError | null = null;
    // Read to its end, the upstream request is over: aborting it would only cost a DOMException.
    let ended = false;
    try {
      await write(opened.first);
      for await (const frame of opened.frames) {
        const full = write(frame);
        if (full) await full;
      }
      ended = true;
    } catch (err) {
      upstream = shutDown ? null : upstreamFailure(err, opened.target.provider.id);
      if (shutDown) error = shutDown;
      else if (err instanceof GatewayError) error = err;
      else if (upstream) error = new GatewayError(502, 'provider_error', upstream.code === 'upstream_timeout' ? 'upstream_timeout' : 'upstream_error', `The upstream failed mid-stream: ${upstream.message}`);
      else if (opened.abort.signal.aborted) error = null; // our own abort (the client left and the drain ended)
      else {
        log?.error({ err }, 'the gateway failed mid-stream');
        error = errors.internal();
      }
      if (error && !clientGone) out.push(codec.errorFrame(error));
    } finally {
      finished = true;
      unhold?.();
      if (!ended) opened.abort.abort();
      if (!clientGone) out.push(null);
      done(error, clientGone, upstream);
    }
  })();
  return out;
}
