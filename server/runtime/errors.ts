import type { ErrorBody } from '../../contract/errors.ts';
import { redactHeldSecrets } from './held-secrets.ts';

type ErrorType = ErrorBody['error']['type'];

/**
 * An error that leaves the gateway as the part-7 body with this status. Its message never carries
 * a secret the gateway holds (it may quote an upstream's text, which may echo the key it was sent):
 * redacted here, once, for the answer, the stream's error event, the log and the span alike.
 */
export class GatewayError extends Error {
  constructor(
    readonly status: number,
    readonly type: ErrorType,
    readonly code: string,
    message: string,
    readonly param: string | null = null,
    readonly headers: Record<string, string> = {},
    readonly extra: Record<string, unknown> = {},
  ) {
    super(redactHeldSecrets(message));
    this.name = 'GatewayError';
  }

  toBody(): ErrorBody {
    return { error: { message: this.message, type: this.type, code: this.code, param: this.param, ...this.extra } };
  }
}

/** Retry-After of the 503s a store outage answers: Redis reconnects within a second, a database failover takes longer. */
export const RETRY_AFTER_SECONDS = { counters: 2, database: 5 } as const;

export const errors = {
  invalid: (message: string, param: string | null = null, code = 'invalid_parameter') =>
    new GatewayError(400, 'invalid_request_error', code, message, param),
  missing: (param: string) =>
    new GatewayError(400, 'invalid_request_error', 'missing_required_parameter', `Missing required parameter: '${param}'.`, param),
  /**
   * `suggestion`: a served id close to the one sent (the catalog's `suggest`). 400 for a request
   * naming the model in its body; 404 when the model is the resource asked for (`GET /v1/models/{id}`).
   */
  modelNotFound: (sent: string, suggestion?: string, status: 400 | 404 = 400) => {
    // Echoed as the client sent it, up to the longest id there is (a path's model may be 16 KiB).
    const model = sent.length > 256 ? `${sent.slice(0, 256)}…` : sent;
    return new GatewayError(
      status,
      'invalid_request_error',
      'model_not_found',
      suggestion
        ? `The model '${model}' does not exist or is not served by this gateway. Did you mean '${suggestion}'? GET /v1/models lists the models it serves.`
        : `The model '${model}' does not exist or is not served by this gateway: GET /v1/models lists the models it serves.`,
      'model',
    );
  },
  unauthenticated: (message = 'Missing or invalid API key. Send it as `Authorization: Bearer <API_KEY>`.', code = 'invalid_api_key') =>
    new GatewayError(401, 'authentication_error', code, message),
  forbidden: (code: string, message: string, param: string | null = null) => new GatewayError(403, 'permission_error', code, message, param),
  notFound: (message: string, code = 'not_found', param: string | null = null) =>
    new GatewayError(404, 'invalid_request_error', code, message, param),
  conflict: (message: string, code: string, param: string | null = null) => new GatewayError(409, 'invalid_request_error', code, message, param),
  tooLarge: (message: string, param: string | null = null) => new GatewayError(413, 'invalid_request_error', 'payload_too_large', message, param),
  unsupportedMediaType: (message: string) => new GatewayError(415, 'invalid_request_error', 'unsupported_media_type', message),
  /** Redis (limits and quotas) is down or stalled: the request was not admitted, nothing was billed. */
  counterStoreUnavailable: () =>
    new GatewayError(
      503,
      'server_error',
      'counter_store_unavailable',
      `The rate-limit and quota store is unreachable, so the gateway cannot meter this request and did not forward it (nothing was billed). Retry after ${RETRY_AFTER_SECONDS.counters} seconds.`,
      null,
      { 'retry-after': String(RETRY_AFTER_SECONDS.counters) },
    ),
  /** PostgreSQL is down or stalled: keys it must look up, usage, accounts and OAuth cannot be served. */
  databaseUnavailable: () =>
    new GatewayError(
      503,
      'server_error',
      'database_unavailable',
      `The gateway's database is unreachable, so this request cannot be served now (nothing was billed). Retry after ${RETRY_AFTER_SECONDS.database} seconds.`,
      null,
      { 'retry-after': String(RETRY_AFTER_SECONDS.database) },
    ),
  /**
   * A stream still open when its stopping process reached SHUTDOWN_TIMEOUT_MS (decision 0029): ended
   * between two frames with this event; what was streamed is billed, the rest was never generated.
   */
  shuttingDown: () =>
    new GatewayError(
      503,
      'server_error',
      'server_shutting_down',
      'This gateway instance is shutting down and ended the stream before the upstream finished it. Send the request again: another instance answers it.',
    ),
  internal: () => new GatewayError(500, 'server_error', 'internal_error', 'Internal server error. The failure was logged with the request id.'),
};

type Issue = { code?: string; path?: readonly PropertyKey[]; message: string; input?: unknown; errors?: Issue[][]; expected?: string };

/** `messages[0].content` from ['messages', 0, 'content']. */
export function paramPath(path: readonly PropertyKey[]): string | null {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : `${out ? '.' : ''}${String(p)}`;
  return out || null;
}

// For a failed union, report the branch that got furthest: its issue says what is actually wrong.
function mostSpecific(issue: Issue, prefix: readonly PropertyKey[]): { issue: Issue; path: PropertyKey[] } {
  const path = [...prefix, ...(issue.path ?? [])];
  if (issue.code === 'invalid_union' && issue.errors?.length) {
    let best: { issue: Issue; path: PropertyKey[] } | null = null;
    for (const branch of issue.errors) {
      for (const inner of branch) {
        const candidate = mostSpecific(inner, path);
        if (!best || candidate.path.length > best.path.length) best = candidate;
      }
    }
    if (best && best.path.length > path.length) return best;
  }
  return { issue, path };
}

/** The first validation issue as a 400 in the part-7 body. `where` prefixes the path (e.g. a query). */
export function validationError(issues: readonly Issue[], where: 'body' | 'query' | 'path' | 'headers' = 'body', input?: unknown): GatewayError {
  const first = issues[0];
  if (!first) return errors.invalid('Invalid request.');
  const { issue, path } = mostSpecific(first, []);
  const param = paramPath(path);
  // zod reports a missing field as a type error; it is missing when the input has nothing there.
  const present = input !== undefined && path.reduce<unknown>((v, k) => (v == null ? undefined : (v as Record<PropertyKey, unknown>)[k]), input) !== undefined;
  const missing = issue.code === 'invalid_type' && !present && /received undefined$/.test(issue.message);
  if (missing && param) return errors.missing(param);
  if (where === 'body' && !param && issue.code === 'invalid_type') {
    return errors.invalid('The request body must be a JSON object.', null, 'invalid_json');
  }
  const message = param ? `Invalid '${param}': ${issue.message}.` : `Invalid request ${where}: ${issue.message}.`;
  return errors.invalid(message.replace(/\.\.$/, '.'), param);
}
