// The request log: one record per request through /v1, what it did and what it cost
// (server/requests/, docs/decisions/0030-request-log.md).
import { z } from 'zod';
import { CLIENT_REQUEST_ID, MAX_CLIENT_REQUEST_ID, prefixedId, storedText } from './common.ts';

const isoTime = z.iso.datetime({ offset: true, message: 'must be an ISO 8601 time, e.g. 2026-11-28T09:00:00Z' });

export const RequestListQuery = z.object({
  key: prefixedId('key', 'an API key').optional().describe('Only this key’s requests. With an API key: only that key itself may be named (the default).'),
  model: storedText(256).min(1).optional().describe('Only requests for this model id (as the client sent it).'),
  client_request_id: z
    .string()
    .min(1)
    .max(MAX_CLIENT_REQUEST_ID)
    .regex(CLIENT_REQUEST_ID, { message: 'a request id of yours is printable ASCII' })
    .optional()
    .describe('Only requests that carried this id of yours (`X-Client-Request-Id` or `X-Request-Id`).'),
  status: z
    .union([z.coerce.number().int().min(100).max(599), z.enum(['2xx', '4xx', '5xx', 'error'])])
    .optional()
    .describe('An exact HTTP status, a class (`2xx`, `4xx`, `5xx`), or `error` (400 and above).'),
  start: isoTime.optional().describe('Only requests at or after this time.'),
  end: isoTime.optional().describe('Only requests before this time.'),
  cursor: z
    .string()
    .max(100)
    .regex(/^[A-Za-z0-9_-]+$/, { message: 'not a cursor: pass `next_cursor` of the previous page as it is' })
    .optional()
    .describe('`next_cursor` of the previous page.'),
  limit: z.coerce.number().int().min(1).max(200).default(50).describe('How many, newest first.'),
});

export const AdminRequestListQuery = RequestListQuery.extend({
  key: prefixedId('key', 'an API key').optional().describe('Only this key’s requests.'),
  user: storedText(320).min(1).optional().describe('Only this user’s requests (id or email).'),
});

export const RequestAttempt = z
  .object({
    provider: z.string(),
    key: z.string().nullable().describe('The pool key’s alias or index when the provider has several keys (never the key itself); null otherwise.'),
    upstream_model: z.string().nullable(),
    start_ms: z.number().int().describe('When the attempt started, in ms from the request’s arrival.'),
    ms: z.number().int().nullable().describe('How long until it answered (a stream: its first event) or failed.'),
    status: z.number().int().nullable().describe('The upstream’s HTTP status when it failed with one; null when it answered or no status came.'),
    failure: z.string().nullable().describe('The failure’s class (`http_429`, `upstream_timeout`, `upstream_unreachable`, …); null when it answered.'),
    late_failure: z.string().nullable().describe('A stream that broke after its first event: the failure’s class.'),
  })
  .meta({ id: 'RequestAttempt' });

export const RequestUsage = z
  .object({
    prompt_tokens: z.number().int(),
    completion_tokens: z.number().int(),
    cached_tokens: z.number().int(),
    reasoning_tokens: z.number().int(),
    cache_write_tokens: z.number().int(),
    audio_input_tokens: z.number().int(),
    image_input_tokens: z.number().int(),
    audio_output_tokens: z.number().int(),
    image_output_tokens: z.number().int(),
    web_search_calls: z.number().int(),
    billed_tokens: z.number().int().describe('What counted against the quota.'),
    cost: z.string().nullable().describe('US dollars, a decimal string; null when a price is unknown.'),
    source: z.enum(['reported', 'estimated']).describe('Reported by the upstream, or estimated by the gateway.'),
  })
  .meta({ id: 'RequestUsage', description: 'The usage ledger’s record of the request (the same numbers /v1/usage sums).' });

export const RequestRecord = z
  .object({
    object: z.literal('request'),
    request_id: z.string().describe('The gateway’s id of the request: the `X-Request-Id` of the response (a job’s run: the job’s id).'),
    client_request_id: z
      .string()
      .nullable()
      .describe('The id the client sent (`X-Client-Request-Id`, or `X-Request-Id`), echoed in the response’s `X-Client-Request-Id`; null when it sent none.'),
    created_at: z.string().describe('When the request arrived (ISO 8601 UTC).'),
    method: z.string(),
    path: z.string().describe('The path without its query string.'),
    endpoint: z.string().nullable().describe('The API surface (`chat`, `messages`, `responses`, `generateContent`, `embeddings`, `images`, …); null for a request refused before routing.'),
    format: z.enum(['openai', 'anthropic', 'gemini']).nullable().describe('The client’s API format.'),
    model: z.string().nullable(),
    status: z.number().int().describe('The HTTP status the client received (a stream that failed after it started keeps its 200; see `error_code`).'),
    error_code: z.string().nullable(),
    stream: z.boolean(),
    aborted: z.boolean().describe('The client went away before the answer ended.'),
    job_id: z.string().nullable().describe('The async job the request started.'),
    latency_ms: z.number().int().describe('From arrival to the answer’s last byte.'),
    first_token_ms: z.number().int().nullable().describe('From arrival to the upstream’s first token (a stream’s first event, else its whole answer).'),
    key: z.object({ id: z.string(), prefix: z.string(), name: z.string().nullable() }).nullable().describe('The API key it was billed to; null for the dashboard session or a refused credential.'),
    user_id: z.string().nullable(),
    oauth_app_id: z.string().nullable(),
    upstream: z.string().nullable().describe('The provider that answered (and the pool key after `#`): the `X-Gateway-Upstream` header.'),
    attempts: z.array(RequestAttempt).describe('Every upstream attempt, in order.'),
    usage: RequestUsage.nullable().describe('null for a request that was never billed (refused before admission).'),
    warnings: z.array(z.string()).describe('What `X-Gateway-Warnings` said.'),
    bodies: z
      .object({
        request_url: z.string().nullable(),
        response_url: z.string().nullable(),
        expires_at: z.string().describe('When the links stop working (they are signed; fetch again for new ones).'),
      })
      .nullable()
      .describe('Captured bodies (only when capture is on for the key or the gateway): signed links, as the client sent and received them, secrets and media payloads elided, size-capped.'),
  })
  .meta({ id: 'RequestRecord' });

export const RequestList = z
  .object({
    object: z.literal('list'),
    data: z.array(RequestRecord),
    next_cursor: z.string().nullable().describe('Pass as `cursor` for the next (older) page; null on the last page.'),
  })
  .meta({ id: 'RequestList' });
