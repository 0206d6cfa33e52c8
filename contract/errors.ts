import { z } from 'zod';

export const ErrorType = z
  .enum([
    'invalid_request_error',
    'authentication_error',
    'permission_error',
    'rate_limit_error',
    'provider_error',
    'server_error',
  ])
  .meta({ id: 'ErrorType' });

export const ErrorObject = z
  .object({
    message: z.string().describe('Human-readable explanation. Never contains a stack trace or a secret.'),
    type: ErrorType,
    code: z
      .string()
      .describe(
        'Machine-readable code. Values in use: missing_required_parameter, invalid_parameter, invalid_json, ' +
          'nesting_too_deep, invalid_url, malformed_request, uri_too_long, headers_too_large, ' +
          'model_not_found, invalid_api_key, api_key_required, session_required, too_many_keys, invalid_multipart, client_closed_request, model_requires_higher_plan, unauthorized_job_access, not_found, ' +
          'job_not_found, app_not_found, grant_not_found, user_not_found, key_not_found, job_not_ready, payload_too_large, unsupported_media_type, rate_limit_exceeded, daily_quota_exceeded, ' +
          'too_many_active_jobs, upstream_error, all_upstreams_failed, upstream_timeout, upstream_invalid_request, content_policy_violation, ' +
          'invalid_size, invalid_image_url, model_cannot_edit, too_many_images, invalid_voice, input_too_long, unsupported_audio_format, ' +
          'model_not_supported, generation_timeout, job_interrupted, job_input_missing, internal_error, ' +
          'counter_store_unavailable, database_unavailable, server_shutting_down.',
      ),
    param: z
      .string()
      .nullable()
      .optional()
      .describe('The offending request field as a path, e.g. `messages[0].content`; null when no single field is at fault.'),
  })
  .meta({ id: 'ErrorObject' });

/**
 * The common error body. Statuses whose meaning is not one of the six types (404 not_found,
 * 409 job_not_ready, 413 payload_too_large, 524 time-out) carry that label as `code`, with type
 * `invalid_request_error` (404/409/413) or `server_error` (524), as the familiar APIs do.
 */
export const ErrorBody = z
  .object({ error: ErrorObject })
  .meta({
    id: 'ErrorBody',
    description:
      'Error body of every endpoint. 400 invalid_request_error; 401 authentication_error; 403 permission_error; ' +
      '404 invalid_request_error + code not_found/job_not_found; 409 invalid_request_error + code job_not_ready; ' +
      '413 invalid_request_error + code payload_too_large; 429 rate_limit_error (+ reset fields); 500 server_error; ' +
      '502/503 provider_error; 503 server_error + counter_store_unavailable (the rate-limit and quota ' +
      'store is unreachable: the request was not forwarded) or database_unavailable, both with `Retry-After`; 524 server_error + upstream_timeout (or generation_timeout with the job that goes on).',
  });
export type ErrorBody = z.infer<typeof ErrorBody>;

/** 429 bodies add the exact moment the exhausted limit resets. */
export const RateLimitErrorBody = z
  .object({
    error: ErrorObject.extend({
      type: z.literal('rate_limit_error'),
      code: z.enum(['rate_limit_exceeded', 'daily_quota_exceeded', 'too_many_active_jobs']),
      limit: z.number().int().describe('The limit that was hit (requests per minute, daily tokens or active jobs).'),
      remaining: z.number().int().describe('What is left of it now (0 or the amount left when a reservation did not fit).'),
      reset_at: z.string().describe('ISO 8601 time (UTC) when the limit resets.'),
      reset_seconds: z.number().describe('Seconds from now until reset_at; the `Retry-After` header carries it rounded up.'),
      scope: z
        .enum(['key', 'user'])
        .describe('Whose limit was hit: `key`, the calling API key’s (or OAuth grant’s) own; `user`, the plan’s limit over all of the user’s keys and connected apps together.'),
    }),
  })
  .meta({
    id: 'RateLimitErrorBody',
    description:
      '429 body. Headers on 429 and on every successful inference response: `Retry-After` (429 only), ' +
      '`X-RateLimit-Limit-Requests`, `X-RateLimit-Remaining-Requests`, `X-RateLimit-Reset-Requests`, ' +
      '`X-RateLimit-Limit-Tokens`, `X-RateLimit-Remaining-Tokens`, `X-RateLimit-Reset-Tokens` (reset values are ISO 8601 times).',
  });

/** OAuth endpoints answer in RFC 6749 form instead of the common error body. */
export const OAuthErrorBody = z
  .object({
    error: z
      .enum([
        'invalid_request',
        'invalid_client',
        'invalid_grant',
        'unauthorized_client',
        'unsupported_grant_type',
        'invalid_scope',
        'invalid_token',
        'access_denied',
        'server_error',
        'temporarily_unavailable',
      ])
      .describe('RFC 6749 §5.2 / RFC 6750 §3.1 error code.'),
    error_description: z.string().describe('Human-readable detail.'),
  })
  .meta({ id: 'OAuthErrorBody' });

type Status = 400 | 401 | 403 | 404 | 409 | 413 | 415 | 429 | 500 | 502 | 503 | 524;

/** The error statuses an endpoint can return, each with the common error body (429 with its reset fields). */
export function errorResponses<const S extends readonly Status[]>(...statuses: S) {
  const out = {} as { [K in S[number]]: K extends 429 ? typeof RateLimitErrorBody : typeof ErrorBody };
  for (const s of statuses) (out as Record<number, unknown>)[s] = s === 429 ? RateLimitErrorBody : ErrorBody;
  return out;
}

/** Statuses every authenticated inference endpoint can produce. */
export const inferenceErrors = errorResponses(400, 401, 403, 413, 429, 500, 502, 503, 524);

/**
 * `/v1/messages` errors: the common error body plus Anthropic's top-level `"type": "error"`, so the
 * Anthropic SDK and Claude Code read them as they read Anthropic's own.
 */
export const MessagesErrorBody = ErrorBody.extend({ type: z.literal('error') }).meta({
  id: 'MessagesErrorBody',
  description: 'Error body of `/v1/messages`: the common error body (`ErrorBody`) with `"type": "error"` beside `error`.',
});
export const MessagesRateLimitErrorBody = RateLimitErrorBody.extend({ type: z.literal('error') }).meta({ id: 'MessagesRateLimitErrorBody' });

/**
 * The errors of a route that answers in Anthropic's shape when the request carries
 * `anthropic-version` (the catalog): the common body, with `"type": "error"` for Anthropic's clients.
 */
export const VersionedErrorBody = z.union([ErrorBody, MessagesErrorBody]);

export function versionedErrorResponses<const S extends readonly Exclude<Status, 429>[]>(...statuses: S) {
  return Object.fromEntries(statuses.map((s) => [s, VersionedErrorBody])) as { [K in S[number]]: typeof VersionedErrorBody };
}

export const messagesErrors = {
  ...Object.fromEntries(Object.keys(inferenceErrors).map((s) => [s, MessagesErrorBody])),
  429: MessagesRateLimitErrorBody,
  524: MessagesErrorBody,
} as { [K in keyof typeof inferenceErrors | 524]: K extends 429 ? typeof MessagesRateLimitErrorBody : typeof MessagesErrorBody };
