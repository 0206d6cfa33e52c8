// Upstream failures classified once for failover: by status, by the error object a body names,
// by the socket error's class. Messages name the provider and the class of failure, never an
// address: a socket error's own text stays in the server log. No message carries a secret the
// gateway holds (runtime/held-secrets.ts): an upstream may echo the key it was sent.
import { redactHeldSecrets } from '../runtime/held-secrets.ts';

/** An error the upstream reported inside a stream that had answered 200. */
export class UpstreamStreamError extends Error {
  constructor(
    message: string,
    readonly upstreamType?: string,
    /** The error object the upstream sent, when it sent one (its code or status classifies it). */
    readonly detail?: unknown,
  ) {
    super(redactHeldSecrets(message));
    this.name = 'UpstreamStreamError';
  }
}

type UpstreamCode = 'upstream_error' | 'upstream_timeout' | 'upstream_unreachable' | 'upstream_rate_limited' | 'upstream_rejected';

/** A failed upstream attempt, classified for failover. Only real upstream outcomes are UpstreamErrors. */
export class UpstreamError extends Error {
  /** The start of the error body the upstream sent (for vendor-specific readings, e.g. a content-policy code). */
  body?: string;
  /** A redirect's Location (3xx), for a download to follow. */
  location?: string;
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
    super(redactHeldSecrets(message), cause === undefined ? undefined : { cause });
    this.name = 'UpstreamError';
  }
}

export function retryAfterSeconds(h: string | string[] | undefined): number | undefined {
  const v = Array.isArray(h) ? h[0] : h;
  if (!v) return undefined;
  const n = Number(v);
  if (Number.isFinite(n)) return n;
  const t = Date.parse(v);
  return Number.isFinite(t) ? Math.max(0, (t - Date.now()) / 1000) : undefined;
}

// What an upstream's own error text may carry that must reach neither the client nor the log (the
// gateway's credential echoed back, the upstream's internal addresses and file paths). Applied in
// order: a URL first, as a whole, so its host and path are not redacted piecemeal.
/**
 * A run shaped like a credential (an API key, a JWT): one of its pieces between `-`, `_` and `.` is
 * 16 characters or more and mixes upper case, lower case and digits. Model ids mix them too
 * (`Meta-Llama-3-8B-Instruct`, `DeepSeek-R1-Distill-Qwen-32B`) but in short pieces.
 */
const credentialLike = (run: string) => run.split(/[-_.]/).some((p) => p.length >= 16 && /[A-Z]/.test(p) && /[a-z]/.test(p) && /\d/.test(p));

const REDACTIONS: [RegExp, string | ((match: string) => string)][] = [
  // Any scheme://… URL (http, https, ws, redis, postgres, …).
  [/\b[a-z][a-z0-9+.-]*:\/\/[^\s'"<>()]+/gi, '[url]'],
  // `Bearer <token>`, `api_key=…`, `x-api-key: …`, `password: …`: the value after the name.
  // A token after the scheme: 8 characters or more with a digit or base64's `+/=` in them, so
  // prose (`basic access`, `bearer tokens`) stays.
  [/\b(bearer|basic)\s+(?=[A-Za-z0-9._~+/=-]*[0-9+/=])[A-Za-z0-9._~+/=-]{8,}/gi, '$1 [redacted]'],
  [/\b((?:x-)?api[-_]?key|access[-_]?token|refresh[-_]?token|client[-_]?secret|secret|password)(["']?\s*[:=]\s*["']?)[^\s'",;&]+/gi, '$1$2[redacted]'],
  // Keys by their vendors' prefixes (OpenAI sk-/sk-proj-, Anthropic sk-ant-, this gateway's mg-,
  // Gemini AIza…, Hugging Face, GitHub, GitLab, Slack, AWS), masked ones (`sk-…abcd`) included.
  [/\b(?:sk|rk|pk|mg|gsk|hf|ghp|gho|ghu|ghs|glpat|xox[abprs])[-_][^\s'",;)\]}]+/g, '[redacted key]'],
  [/\b(?:AIza[0-9A-Za-z_-]{20,}|AKIA[0-9A-Z]{12,})/g, '[redacted key]'],
  // IPv4 (with a port), bracketed IPv6 (with a port), bare IPv6 (two groups or `::` at least).
  [/\b(?:\d{1,3}\.){3}\d{1,3}(?::\d{1,5})?\b/g, '[address]'],
  [/\[[0-9a-f:.]*:[0-9a-f:.]*\](?::\d{1,5})?/gi, '[address]'],
  [/(?<![\w:])(?:(?:[0-9a-f]{1,4}:){7}[0-9a-f]{1,4}|(?:[0-9a-f]{1,4}:)*:(?::?[0-9a-f]{1,4})+)(?![\w:])/gi, '[address]'],
  // host:port (a dotted name with any port; a one-label name, like a container's, with a port of
  // four or five digits, so `status:429` stays), and host names that only exist inside a network.
  [/\b(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z][a-z0-9-]*:\d{2,5}\b|\b[a-z][a-z0-9-]*:\d{4,5}\b/gi, '[address]'],
  [/\b(?:[a-z0-9-]+\.)+(?:internal|local|localdomain|lan|intranet|corp|home|svc|cluster)\b/gi, '[address]'],
  [/\blocalhost\b/gi, '[address]'],
  // File paths: Unix (two segments at least, so `and/or` and `/v1` stay) and Windows.
  [/(?<![\w.:/\]])\/(?:[^\s/'"<>(),;]+\/)+[^\s'"<>(),;]*/g, '[path]'],
  [/\b[a-z]:\\[^\s'"<>(),;]+/gi, '[path]'],
  // Anything else shaped like a credential (see credentialLike), or 32+ hex digits.
  [/(?<![\w.-])[\w+/=.-]{16,}/g, (run) => (credentialLike(run) ? '[redacted]' : run)],
  [/\b[0-9a-f]{32,}\b/gi, '[redacted]'],
];

/**
 * An upstream's error text as it may be shown to clients and written to logs: key-like strings,
 * URLs, network addresses and file paths replaced by placeholders; at most 300 characters. The
 * provider id and the status are added by the caller, so the summary keeps its meaning.
 */
export function redactUpstreamText(text: string): string {
  // By value first: a held key is replaced whole, before the patterns could cut it into pieces.
  let out = redactHeldSecrets(text);
  for (const [pattern, replacement] of REDACTIONS) out = typeof replacement === 'string' ? out.replace(pattern, replacement) : out.replace(pattern, replacement);
  return out.length > 300 ? `${out.slice(0, 300)}…` : out;
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

export function classifyStatus(provider: string, status: number, text: string, retryAfter?: number, message: (text: string) => string = upstreamErrorMessage): UpstreamError {
  const e = classified(provider, status, `answered HTTP ${status}: ${redactUpstreamText(message(text))}`, retryAfter);
  e.body = text.slice(0, 8192);
  return e;
}

/** The machine-readable code of an upstream's error body (`error.code`, or `error.status` for Google), if any. */
export function upstreamErrorCode(e: UpstreamError): string | null {
  try {
    const j = JSON.parse(e.body ?? '') as { error?: { code?: unknown; status?: unknown } };
    const c = j.error?.code ?? j.error?.status;
    return typeof c === 'string' ? c : null;
  } catch {
    return null;
  }
}

function classified(provider: string, status: number, what: string, retryAfter?: number): UpstreamError {
  const message = `provider '${provider}': ${what}`;
  if (status === 429) return new UpstreamError(message, status, true, 'upstream_rate_limited', retryAfter);
  if (status >= 500 || status === 408) return new UpstreamError(message, status, true, 'upstream_error', retryAfter);
  // 401/403/404 mean this upstream is misconfigured for the model, and 402 that its account is out
  // of credits (OpenRouter's "Insufficient credits"): another key or upstream may work.
  if (status === 401 || status === 402 || status === 403 || status === 404) return new UpstreamError(message, status, true, 'upstream_error');
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
  return classified(provider, errorObjectStatus(e), `reported an error: ${redactUpstreamText(message)}`);
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
export function networkFailure(provider: string, err: unknown, limits: { connectMs: number }): UpstreamError {
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
