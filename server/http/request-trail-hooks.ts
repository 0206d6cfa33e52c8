// Every request through /v1 (and Gemini's /v1beta) gets a trail when it arrives, before its
// credential is checked (a refused one is recorded too), and the trail is finished when the
// response closes, however it ends: answered, failed, or left by the client. The finished trail
// goes to the request log (and the tracer has seen it as it went).
//
// Callback hooks and one 'close' listener per request: no promise on the hot path. Body capture
// wraps the response's write/end only for a request whose capture is on.
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { RequestTrail } from '../observe/request-trail.ts';
import { BodyCapture, captureWindow, requestText } from '../requests/capture.ts';
import { contract } from '../../contract/index.ts';
import type { Services } from './services.ts';
import { recordPath } from './redact-url.ts';
import { routeLabel } from './route-labels.ts';
import { routeOptionsOf } from './route-options.ts';
import { CLIENT_CLOSED, nodeAnswerOf } from './node-answers.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's trail (attempts, phases) for the request log and the tracer; /v1 routes only. */
    trail?: RequestTrail;
    /** What the response wrote, when the request's bodies are captured. */
    capture?: BodyCapture;
    /** The path as recorded (http/redact-url.ts `recordPath`), once worked out. */
    recordedPath?: string;
  }
}

/**
 * Logged: inference and the per-key reads under /v1 and /v1beta. Not the log's own reads (the
 * dashboard polls them), nor hosted-file downloads by any method or spelling (`HEAD`,
 * `/v1/%66iles/…`): their path is a signed link, a credential that must not land in the log or a span.
 */
function logged(method: string, url: string, path: string, secretPath: boolean): boolean {
  if (!url.startsWith('/v1/') && !url.startsWith('/v1beta/')) return false;
  if (secretPath) return false;
  return !(method === 'GET' && path === '/v1/requests');
}

export function trailHooks(services: Services) {
  const onRequest = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    start(request, reply);
    // Refused before the credential is looked at (http/client-request-id.ts), and recorded as such.
    done(request.refusal);
  };

  const start = (request: FastifyRequest, reply: FastifyReply) => {
    if (!services.requestLog.config.enabled && !services.trails.observed) return;
    const q = request.url.indexOf('?');
    const path = q < 0 ? request.url : request.url.slice(0, q);
    const recorded = recordPath(path);
    // The log line's URL reuses it (app.ts logRequest).
    request.recordedPath = recorded.path;
    if (!logged(request.method, request.url, path, recorded.secret)) return;
    const trail = services.trails.start(request.id, request.method, recorded.path, request.headers);
    trail.route = routeOptionsOf(request).url ?? null;
    trail.clientRequestId = request.clientRequestId ?? null;
    const label = routeLabel(request);
    if (label) {
      trail.capability = label.surface;
      trail.format = label.format;
      trail.operation = label.operation;
    }
    request.trail = trail;
    reply.raw.once('close', () => finish(services, request, reply, trail));
  };

  /**
   * After the credential and the body, before validation: a request refused as invalid keeps its
   * body too. Inference calls only: other routes' bodies carry what must never be stored (a new
   * API key, an OAuth code and its verifier, a job's signed download links).
   */
  const preValidation = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    if (request.trail && isInferenceCall(request) && services.requestLog.captures(request.principal)) captureResponse(request, reply, captureWindow(services.requestLog.config.max_body_bytes));
    done();
  };

  return { onRequest, preValidation };
}

/** `POST <pattern>` of every inference route (the capabilities'): the calls whose bodies may be captured. */
const INFERENCE_CALLS = new Set(Object.values(contract.inference).filter((r) => r.method === 'POST').map((r) => r.path));

const isInferenceCall = (request: FastifyRequest) => request.method === 'POST' && INFERENCE_CALLS.has(routeOptionsOf(request).url ?? '');

/** Wraps write/end of this one response to keep a copy of what the client receives (up to `max` bytes). */
function captureResponse(request: FastifyRequest, reply: FastifyReply, max: number): void {
  const capture = new BodyCapture(max);
  request.capture = capture;
  const res = reply.raw;
  const write = res.write;
  const end = res.end;
  res.write = function (this: typeof res, chunk: unknown, ...rest: unknown[]) {
    capture.add(chunk, typeof rest[0] === 'string' ? (rest[0] as BufferEncoding) : undefined);
    return (write as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
  } as typeof res.write;
  res.end = function (this: typeof res, chunk?: unknown, ...rest: unknown[]) {
    capture.add(chunk, typeof rest[0] === 'string' ? (rest[0] as BufferEncoding) : undefined);
    return (end as (...args: unknown[]) => typeof res).call(this, chunk, ...rest);
  } as typeof res.end;
}

/**
 * Reads that are not API use stay out of the log (they are still traced): the dashboard's own
 * pages reading with the session cookie, and anonymous reads of the public catalog and status
 * (monitors poll them). A refused read is kept: it is someone's failed attempt.
 */
function worthRecording(method: string, status: number, principal: FastifyRequest['principal']): boolean {
  if (method !== 'GET' || status >= 400) return true;
  return principal !== undefined && principal.kind !== 'session';
}

function finish(services: Services, request: FastifyRequest, reply: FastifyReply, trail: RequestTrail): void {
  const warnings = reply.getHeader('x-gateway-warnings');
  const principal = request.principal;
  // Nothing answered through the reply: Node answered on the socket (a malformed or stalled body),
  // or the client left before any answer (a body that never came in full).
  const unanswered = reply.raw.headersSent ? null : (nodeAnswerOf(reply.raw) ?? CLIENT_CLOSED);
  const end = {
    status: unanswered?.status ?? reply.statusCode,
    errorCode: unanswered?.code ?? request.errorCode ?? null,
    aborted: !reply.raw.writableFinished,
    totalMs: trail.now(),
    warnings: typeof warnings === 'string' && warnings ? warnings.split('; ') : [],
    principal: principal ? { keyId: principal.keyId || null, userId: principal.userId || null, appId: principal.appId ?? null } : null,
  };
  services.trails.finish(trail, end);
  if (!worthRecording(request.method, end.status, principal)) return;
  const upstream = reply.getHeader('x-gateway-upstream');
  const captured = request.capture
    ? {
        request: requestText(request.body, request.headers['content-type'], captureWindow(services.requestLog.config.max_body_bytes)),
        response: request.capture,
        responseType: String(reply.getHeader('content-type') ?? ''),
      }
    : null;
  services.requestLog.record(trail, end, typeof upstream === 'string' ? upstream : null, captured);
}
