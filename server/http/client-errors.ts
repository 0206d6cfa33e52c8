// What Node's HTTP server answers by itself, before (or instead of) a route: requests whose headers
// or body do not arrive in time, headers over the 16 KiB limit, syntax Node's parser refuses. The
// answer is written on the socket, which is then closed; its body is the one the request's
// endpoint answers in (client-format.ts): the part-7 error, Google's on the Gemini-format routes,
// RFC 6749's `{error, error_description}` on an OAuth protocol endpoint, as far as the request is known.
import { STATUS_CODES, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { envMs } from '../stores/index.ts';
import { GatewayError } from '../runtime/errors.ts';
import { hasHeaderIn } from '../client-formats/spec.ts';
import { envelopeBeforeRouting, errorBodyIn } from './client-format.ts';
import { noteNodeAnswer } from './node-answers.ts';

/** How long a client may take to send a request: its headers, and the whole of it (body included). */
export type RequestTimeouts = { headersMs: number; bodyMs: number };

/**
 * Headers are at most 16 KiB: 30 s is generous on any link. A body may be a 25 MB audio upload:
 * 10 minutes lets it through at ~350 kbit/s. Neither limit runs once the request is received, so
 * long answers (streams, slow upstreams) are never cut by them.
 */
export const defaultRequestTimeouts: RequestTimeouts = { headersMs: 30_000, bodyMs: 600_000 };

/** REQUEST_HEADERS_TIMEOUT_MS and REQUEST_BODY_TIMEOUT_MS (README, Configuration). */
export function requestTimeouts(env: NodeJS.ProcessEnv): RequestTimeouts {
  const t = {
    headersMs: envMs(env, 'REQUEST_HEADERS_TIMEOUT_MS', defaultRequestTimeouts.headersMs),
    bodyMs: envMs(env, 'REQUEST_BODY_TIMEOUT_MS', defaultRequestTimeouts.bodyMs),
  };
  // Node refuses a headers limit beyond the whole request's; said in the operator's terms instead.
  if (t.headersMs > t.bodyMs) {
    throw new Error(`REQUEST_HEADERS_TIMEOUT_MS (${t.headersMs}) must not be longer than REQUEST_BODY_TIMEOUT_MS (${t.bodyMs}), which bounds the whole request`);
  }
  return t;
}

/**
 * Node's server options for `t`. Node checks the limits every `connectionsCheckingInterval` (30 s
 * by default, too coarse for a 30 s limit): a tenth of the shorter one, between 100 ms and 5 s.
 * The check walks only connections still receiving a request.
 */
export function serverTimeoutOptions(t: RequestTimeouts) {
  return {
    requestTimeout: t.bodyMs,
    http: { headersTimeout: t.headersMs, requestTimeout: t.bodyMs, connectionsCheckingInterval: Math.min(5_000, Math.max(100, Math.floor(Math.min(t.headersMs, t.bodyMs) / 10))) },
  };
}

// The request line at the start of a chunk: `POST /v1/oauth/token HTTP/1.1`.
const REQUEST_LINE = /^([A-Z]{3,10}) ([^ \r\n]+) HTTP\/1\.[01]\r?\n/;

/** What is known of the request an error is about: its method (when known), its URL, which headers it has. */
type KnownRequest = { method?: string; url: string; has: (name: string) => boolean };

/** The request whose request line starts `chunk`, with the headers the chunk holds, if it starts with one. */
function requestAtStart(chunk: Buffer): KnownRequest | undefined {
  if (chunk.length < 14 || chunk[0]! < 0x41 || chunk[0]! > 0x5a) return undefined;
  const line = REQUEST_LINE.exec(chunk.toString('latin1', 0, Math.min(chunk.length, 2_100)));
  if (!line) return undefined;
  let head: string | undefined;
  const has = (name: string) => {
    head ??= chunk.toString('latin1');
    return new RegExp(`\\r\\n${name}[ \\t]*:`, 'i').test(head);
  };
  return { method: line[1], url: line[2]!, has };
}

/** The response Node has begun on `socket` (internal to Node's server, which reads it the same way). */
const responseOn = (socket: Socket) => (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage ?? null;

/**
 * The request `err` is about, as far as Node lets it be known; what it costs nothing to read
 * (watching every connection's bytes would take Node's parser off its fast path, where it reads
 * the socket itself). Headers that came in one packet: the chunk Node failed on starts with the
 * request line, and holds the headers. Headers read in full (a body that stalled or is malformed):
 * the request Node made of them. Headers in many packets: the URL Node's parser hands to
 * JavaScript once it has read 32 header fields (neither method nor headers); with fewer, and
 * larger ones, nothing.
 */
function requestOf(err: { rawPacket?: unknown }, socket: Socket): KnownRequest | undefined {
  const inPacket = Buffer.isBuffer(err.rawPacket) ? requestAtStart(err.rawPacket) : undefined;
  if (inPacket) return inPacket;
  const req = responseOn(socket)?.req;
  if (req?.url) return { method: req.method, url: req.url, has: hasHeaderIn(req.headers) };
  const url = (socket as Socket & { parser?: { _url?: unknown } | null }).parser?._url;
  return typeof url === 'string' && url ? { url, has: () => false } : undefined;
}

/** Node's `clientError` handler: the error in the body its endpoint's clients read, then the socket closed. */
export function clientErrorHandler(t: RequestTimeouts) {
  const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;
  return function onClientError(err: Error & { code?: string; rawPacket?: unknown }, socket: Socket): void {
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const response = responseOn(socket);
    // An answer already under way cannot be followed by another: the connection just ends.
    if (response?.headersSent) {
      socket.destroy();
      return;
    }
    // A request whose headers were all read has a response object waiting for its body.
    const [status, code, message] =
      err.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'headers_too_large', 'The request headers are larger than this server accepts (16 KiB in all).']
        : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? response
            ? [408, 'request_timeout', `The request body was not received within ${seconds(t.bodyMs)} of the request's start: send it without pausing (the operator sets the limit: REQUEST_BODY_TIMEOUT_MS).`]
            : [408, 'request_timeout', `The request headers were not received within ${seconds(t.headersMs)}: send them at once (the operator sets the limit: REQUEST_HEADERS_TIMEOUT_MS).`]
          : [400, 'malformed_request', 'The request is not valid HTTP/1.1 (malformed request line or headers, or conflicting Content-Length and Transfer-Encoding).'];
    const request = requestOf(err, socket);
    const envelope = request ? envelopeBeforeRouting(request.method, request.url, request.has) : 'common';
    const oauth = envelope === 'oauth';
    const body = JSON.stringify(errorBodyIn(envelope, new GatewayError(status, 'invalid_request_error', code, message)));
    if (socket.writable) {
      // A request the gateway had begun (its record is open) ends with this answer; one whose
      // client stopped sending before its body was complete (EOF) is recorded as the client's
      // doing (the record's default), whatever this answer reaches.
      if (response && err.code !== 'HPE_INVALID_EOF_STATE') noteNodeAnswer(response, { status, code });
      socket.write(
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nX-Content-Type-Options: nosniff\r\n` +
          `${oauth ? 'Cache-Control: no-store\r\n' : ''}Connection: close\r\n\r\n${body}`,
      );
    }
    socket.destroy();
  };
}
