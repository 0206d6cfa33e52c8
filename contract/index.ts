// The single source of truth for the HTTP interface: every public /v1 route, the admin API
// behind the CLI and dashboard, and the operator endpoints. The OpenAPI document and the TypeScript
// client are generated from this file (npm run generate).
import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import * as admin from './admin.ts';
import * as dashboard from './dashboard.ts';
import * as audio from './audio.ts';
import { ChatCompletion, ChatCompletionChunk, ChatCompletionRequest } from './chat.ts';
import { EmbeddingsRequest, EmbeddingsResponse, ModerationRequest, ModerationResponse } from './embeddings.ts';
import { ErrorBody, OAuthErrorBody, errorResponses, inferenceErrors, messagesErrors } from './errors.ts';
import { ImageGenerationRequest, ImagesResponse } from './images.ts';
import { GenerationTimeoutBody, Job, JobIdParams } from './jobs.ts';
import { prefixedId } from './common.ts';
import { MessagesRequest, MessagesResponse, MessagesStreamEvent } from './messages.ts';
import { ModelList, ModelStatusList, ModelStatusQuery } from './models.ts';
import * as oauth from './oauth.ts';
import { ResponseObject, ResponsesRequest, ResponsesStreamEvent } from './responses.ts';
import { UsageQuery, UsageReport } from './usage.ts';

export * from './errors.ts';

const c = initContract();

export type AuthScheme = 'none' | 'bearer' | 'bearer-or-x-api-key' | 'admin' | 'oauth-client' | 'oauth-token' | 'session';

/** Route facts the OpenAPI generator and the server both read. */
export type RouteMeta = {
  auth: AuthScheme;
  tag: string;
  /** The SSE event schema sent instead of the JSON body when the request has `stream: true`. */
  stream?: z.ZodType;
  /** Bodies by status beyond the route's own: content type → description of raw bytes, or a schema. */
  raw?: Record<number, Record<string, string | z.ZodType>>;
  /**
   * `anthropic`: error bodies also carry `"type": "error"` at the top, as Anthropic's own do.
   * `page`: a browser endpoint; errors are an HTML page with the message.
   */
  errorEnvelope?: 'anthropic' | 'page';
  /** A path parameter that cannot be an id of this kind answers 404 with this code (`what`: "No such <what>."). */
  notFound?: { code: string; what: string };
  /**
   * `account`: manages the user's account (apps, connected apps), so only the user's own API keys
   * may call it; credentials issued to an app (access tokens, a grant's api_key) get 403.
   */
  access?: 'account';
  /**
   * The dashboard's session cookie is accepted too (instead of the bearer credential; for admin
   * routes, a session of a user with the admin role). POST, PATCH and DELETE with it need the
   * session's `X-CSRF-Token`.
   */
  session?: true;
  /**
   * The answer carries a secret (an API key, a client secret, the session's CSRF token): sent with
   * `Cache-Control: no-store` so no browser or proxy cache keeps it.
   */
  noStore?: true;
};
const meta = (m: RouteMeta) => ({ metadata: m });

const jobErrors = errorResponses(401, 403, 404, 500);

const inference = c.router({
  chatCompletions: {
    method: 'POST',
    path: '/v1/chat/completions',
    body: ChatCompletionRequest,
    responses: { 200: ChatCompletion, ...inferenceErrors },
    summary: 'Create a chat completion',
    description:
      'Chat-completions format for every text model of the catalog; `stream: true` answers with SSE chunks (`data: [DONE]` ends the stream). ' +
      '`web_search_options` turns on web search (native for OpenAI-format and Anthropic upstreams, the gateway’s own search for others; ' +
      'stripped, and named in `X-Gateway-Stripped-Tools`, when neither is available). Response headers: `X-Gateway-Upstream`, `X-RateLimit-*`, `X-Gateway-Overhead-Ms` (the gateway’s own time in ms: all but waiting on upstreams), ' +
      '`X-Gateway-Warnings` (what translating for the chosen upstream changed or dropped, `; `-separated).',
    ...meta({ auth: 'bearer', tag: 'Text', stream: ChatCompletionChunk }),
  },
  messages: {
    method: 'POST',
    path: '/v1/messages',
    body: MessagesRequest,
    headers: z.looseObject({
      'anthropic-version': z.string().optional().describe('Date-formatted version string sent by native clients; accepted and ignored.'),
    }),
    responses: { 200: MessagesResponse, ...messagesErrors },
    summary: 'Create a message (Messages format)',
    description:
      'Authenticates with `x-api-key` or `Authorization: Bearer`. The `web_search_20250305` server tool works for every model ' +
      '(natively on Anthropic, through the gateway’s own search elsewhere; stripped and named in `X-Gateway-Stripped-Tools` when unavailable). ' +
      'Response headers as for chat completions.',
    ...meta({ auth: 'bearer-or-x-api-key', tag: 'Text', stream: MessagesStreamEvent, errorEnvelope: 'anthropic' }),
  },
  responses: {
    method: 'POST',
    path: '/v1/responses',
    body: ResponsesRequest,
    responses: { 200: ResponseObject, ...inferenceErrors },
    summary: 'Create a response (Responses format)',
    description:
      'Passed through to OpenAI upstreams; translated for the others. Built-in tools other providers cannot run are stripped and listed in the ' +
      '`X-Gateway-Stripped-Tools` response header; `web_search`/`web_search_preview` work everywhere (Anthropic’s server tool, or the gateway’s own search ' +
      'with `url_citation` annotations) and add the configured surcharge to the request’s billed tokens. `previous_response_id`, file ids and references ' +
      'to stored items need an OpenAI model (400 otherwise); references to items this gateway generated are resolved for an hour. ' +
      'Response headers as for chat completions.',
    ...meta({ auth: 'bearer', tag: 'Text', stream: ResponsesStreamEvent }),
  },
  imageGenerations: {
    method: 'POST',
    path: '/v1/images/generations',
    body: ImageGenerationRequest,
    responses: { 200: ImagesResponse, 202: Job, ...inferenceErrors, 524: z.union([GenerationTimeoutBody, ErrorBody]) },
    summary: 'Generate or edit an image, or start a video',
    description:
      'Image models answer 200 with `data[]` (one image: `n` above 1 is refused); `sync: false` and video models answer 202 with a job, whose `result` holds the same ' +
      '`data[]` once done (for video: the hosted MP4 and its `duration_seconds`). `image_url` (up to 5) turns generation into editing on models that can edit. ' +
      'Every `url` is a hosted copy on this gateway (`/v1/files/…`, signed, no credential needed). Fields an upstream cannot take are mapped (size → nearest ' +
      'supported size or aspect ratio, seconds → nearest supported duration) or stripped, each named in `X-Gateway-Warnings` (per upstream model: docs/images.md). ' +
      'A content-policy refusal is 400 `content_policy_violation` with the upstream\'s reason, not billed. A synchronous request still running after ' +
      '`jobs.sync_timeout_seconds` answers 524 `generation_timeout` naming the job that will hold its result (billed once).',
    ...meta({ auth: 'bearer', tag: 'Images' }),
  },
  imageJob: {
    method: 'GET',
    path: '/v1/images/generations/:id',
    pathParams: JobIdParams,
    responses: { 200: Job, ...jobErrors },
    summary: 'Poll an image or video job',
    ...meta({ session: true, auth: 'bearer', tag: 'Images', notFound: { code: 'job_not_found', what: 'job' } }),
  },
  speech: {
    method: 'POST',
    path: '/v1/audio/speech',
    body: audio.SpeechRequest,
    responses: {
      200: c.otherResponse({ contentType: 'audio/mpeg', body: z.unknown() }),
      ...inferenceErrors,
      524: z.union([GenerationTimeoutBody, ErrorBody]),
    },
    summary: 'Text to speech',
    description:
      'Audio bytes (family A: the requested format; B: audio/mpeg; C: audio/wav), streamed as the upstream sends them, or JSON `SpeechWithTimestamps` for family B with `with-timestamps`. ' +
      'The pronunciation dictionary is applied before the text goes upstream (docs/pronunciation.md); skipped phoneme rules are named in the `X-Service-Pronunciation-Warnings` header, ' +
      'fields of another family in `X-Gateway-Warnings`. A voice of another family is 400 `invalid_voice` naming the valid ones; family B input over 4096 characters as sent (tags included) is 400 `input_too_long`. ' +
      'A request not answered within `jobs.sync_timeout_seconds` is 524 `generation_timeout` naming the job that finishes it (billed once). Billed per 1,000 characters as spoken (aliases applied, tags not counted).',
    ...meta({
      auth: 'bearer',
      tag: 'Audio',
      raw: {
        200: {
          'audio/mpeg': 'mp3',
          'audio/opus': 'opus',
          'audio/aac': 'aac',
          'audio/flac': 'flac',
          'audio/wav': '24 kHz mono PCM in a WAV container (family C)',
          'application/json': audio.SpeechWithTimestamps,
        },
      },
    }),
  },
  speechJobCreate: {
    method: 'POST',
    path: '/v1/audio/speech/jobs',
    body: audio.SpeechRequest,
    responses: { 202: Job, ...inferenceErrors },
    summary: 'Submit an async speech job',
    description:
      'Same body and checks as POST /v1/audio/speech; answers 202 with the job at once. Poll `…/status`: `pronunciation_warnings` lists skipped phoneme rules, ' +
      '`warnings` ignored fields, and once done `result` is `{content_type, bytes}`; `…/download` then streams the audio (or the with-timestamps JSON).',
    ...meta({ auth: 'bearer', tag: 'Audio' }),
  },
  speechJobStatus: {
    method: 'GET',
    path: '/v1/audio/speech/jobs/:id/status',
    pathParams: JobIdParams,
    responses: { 200: Job, ...jobErrors },
    summary: 'Poll an async speech job',
    ...meta({ session: true, auth: 'bearer', tag: 'Audio', notFound: { code: 'job_not_found', what: 'job' } }),
  },
  speechJobDownload: {
    method: 'GET',
    path: '/v1/audio/speech/jobs/:id/download',
    pathParams: JobIdParams,
    responses: { 200: c.otherResponse({ contentType: 'audio/mpeg', body: z.unknown() }), 409: ErrorBody, ...jobErrors },
    summary: 'Download the audio of a finished speech job',
    description: 'The audio with the content type of the model family (as POST /v1/audio/speech answers it), or the with-timestamps JSON. 409 job_not_ready until the job is done.',
    ...meta({
      session: true,
      auth: 'bearer',
      tag: 'Audio',
      raw: {
        200: {
          'audio/mpeg': 'mp3 (families A and B)',
          'audio/opus': 'opus',
          'audio/aac': 'aac',
          'audio/flac': 'flac',
          'audio/wav': 'family C',
          'application/json': audio.SpeechWithTimestamps,
        },
      },
      notFound: { code: 'job_not_found', what: 'job' },
    }),
  },
  transcriptions: {
    method: 'POST',
    path: '/v1/audio/transcriptions',
    contentType: 'multipart/form-data',
    body: audio.TranscriptionRequest,
    responses: {
      200: audio.TranscriptionVerbose.or(audio.Transcription),
      ...inferenceErrors,
      415: ErrorBody,
    },
    summary: 'Speech to text',
    description:
      'Multipart form; the file (at most 25 MB: 413 `payload_too_large` as soon as that is crossed) is read as a stream and recognised by its bytes ' +
      '(mp3, mp4, mpeg, mpga, m4a, wav, webm; anything else is 400 `unsupported_audio_format`). Every response format works for every model, rendered by the gateway: ' +
      '`json` (default) and `verbose_json` (OpenAI’s shape; `words` only when the upstream timed them) answer JSON, `text` text/plain, `srt` application/x-subrip, ' +
      '`vtt` text/vtt. Models whose upstream gives no timestamps get timing estimated from the audio’s real duration, said in `X-Gateway-Warnings` and as ' +
      '`timing: "estimated"` in verbose_json (docs/transcription.md). Billed per audio minute (from the container), or by the tokens the upstream reports.',
    ...meta({
      auth: 'bearer',
      tag: 'Audio',
      raw: { 200: { 'text/plain': 'response_format text', 'application/x-subrip': 'response_format srt', 'text/vtt': 'response_format vtt (WebVTT)' } },
    }),
  },
  transcriptionJobCreate: {
    method: 'POST',
    path: '/v1/audio/transcriptions/jobs',
    contentType: 'multipart/form-data',
    body: audio.TranscriptionRequest,
    responses: { 202: Job, ...inferenceErrors, 415: ErrorBody },
    summary: 'Submit an async transcription job',
    description:
      'The same form and checks as POST /v1/audio/transcriptions; the upload is kept in the blob store and 202 answers the job at once. Poll `…/status` ' +
      '(`result` is `{content_type, bytes}` once done, `warnings` says when timing was estimated); `…/download` answers the transcript in the requested format.',
    ...meta({ auth: 'bearer', tag: 'Audio' }),
  },
  transcriptionJobStatus: {
    method: 'GET',
    path: '/v1/audio/transcriptions/jobs/:id/status',
    pathParams: JobIdParams,
    responses: { 200: Job, ...jobErrors },
    summary: 'Poll an async transcription job',
    ...meta({ session: true, auth: 'bearer', tag: 'Audio', notFound: { code: 'job_not_found', what: 'job' } }),
  },
  transcriptionJobDownload: {
    method: 'GET',
    path: '/v1/audio/transcriptions/jobs/:id/download',
    pathParams: JobIdParams,
    responses: { 200: audio.TranscriptionVerbose.or(audio.Transcription), 409: ErrorBody, ...jobErrors },
    summary: 'Download a finished transcription',
    description: 'In the job’s response_format, with its content type (as the synchronous endpoint answers). 409 job_not_ready until done.',
    ...meta({
      session: true,
      auth: 'bearer',
      tag: 'Audio',
      raw: { 200: { 'text/plain': 'response_format text', 'application/x-subrip': 'response_format srt', 'text/vtt': 'response_format vtt (WebVTT)' } },
      notFound: { code: 'job_not_found', what: 'job' },
    }),
  },
  embeddings: {
    method: 'POST',
    path: '/v1/embeddings',
    body: EmbeddingsRequest,
    responses: { 200: EmbeddingsResponse, ...inferenceErrors },
    summary: 'Create embeddings',
    description:
      'OpenAI’s shape for every upstream (Gemini’s vectors are encoded as OpenAI encodes them). Response headers: `X-Gateway-Upstream`, `X-RateLimit-*`, ' +
      '`X-Gateway-Overhead-Ms`, and `X-Gateway-Warnings` (`; `-separated) naming request fields the chosen upstream has no place for, which were dropped.',
    ...meta({ auth: 'bearer', tag: 'Embeddings and moderation' }),
  },
  moderations: {
    method: 'POST',
    path: '/v1/moderations',
    body: ModerationRequest,
    responses: { 200: ModerationResponse, ...inferenceErrors },
    summary: 'Classify text for policy violations',
    description: 'Response headers as for embeddings: `X-Gateway-Upstream`, `X-RateLimit-*`, `X-Gateway-Overhead-Ms`, `X-Gateway-Warnings`.',
    ...meta({ auth: 'bearer', tag: 'Embeddings and moderation' }),
  },
});

const metadataRoutes = c.router({
  listModels: {
    method: 'GET',
    path: '/v1/models',
    responses: { 200: ModelList, ...errorResponses(500) },
    summary: 'The model catalog',
    description: 'No authentication. Every model this gateway serves, with its endpoint, plan, multiplier and capability metadata; unknown values are null.',
    ...meta({ auth: 'none', tag: 'Models' }),
  },
  modelStatus: {
    method: 'GET',
    path: '/v1/models/status',
    query: ModelStatusQuery,
    responses: { 200: ModelStatusList, ...errorResponses(400, 500) },
    summary: 'Per-model health history',
    description: 'No authentication (like a public status page).',
    ...meta({ auth: 'none', tag: 'Models' }),
  },
  usage: {
    method: 'GET',
    path: '/v1/usage',
    query: UsageQuery,
    responses: { 200: UsageReport, ...errorResponses(400, 401, 404, 500) },
    summary: 'Usage statistics and limit state',
    description:
      'The calling key’s plan, its live counters with exact reset times (daily tokens reset at 00:00 UTC; the minute window starts at its first request), ' +
      'and a per-model and per-day breakdown of the usage ledger for `start`..`end` (UTC days, inclusive; default the last 7 days, at most 366). ' +
      'With the dashboard session it covers all your keys (or the one named by `key`).',
    ...meta({ session: true, auth: 'bearer', tag: 'Usage' }),
  },
  hostedFile: {
    method: 'GET',
    path: '/v1/files/:token',
    pathParams: z.object({
      token: z
        .string()
        .max(600)
        .regex(/^[A-Za-z0-9_-]+\.\d{1,12}\.[A-Za-z0-9_-]+$/, { message: 'not a file link' }),
    }),
    responses: { 200: c.otherResponse({ contentType: 'application/octet-stream', body: z.unknown() }), ...errorResponses(404, 500) },
    summary: 'A hosted copy of a generated file',
    description:
      'No authentication: the link is the credential. Links are signed by the gateway (HMAC-SHA256 with a key derived from GATEWAY_SECRET), name one stored output and carry their expiry ' +
      '(at most the job retention); any instance serves them, with the stored content type and length, so they work in an `<img>`. ' +
      'An expired, altered or unknown link is 404 file_not_found.',
    ...meta({ auth: 'none', tag: 'Models', raw: { 200: { 'image/png': 'the stored bytes, with their own content type' } }, notFound: { code: 'file_not_found', what: 'file' } }),
  },
});

const dashboardRoutes = c.router({
  session: {
    method: 'GET',
    path: '/v1/session',
    responses: { 200: dashboard.DashboardSession, ...errorResponses(401, 500) },
    summary: 'The signed-in user of the dashboard session, and its CSRF token',
    description: 'Authenticated by the session cookie `mg_session` (set by signing in at /signin). 401 `not_signed_in` without a valid session.',
    ...meta({ auth: 'session', tag: 'Dashboard', noStore: true }),
  },
  listApiKeys: {
    method: 'GET',
    path: '/v1/keys',
    responses: { 200: z.object({ object: z.literal('list'), data: z.array(dashboard.ApiKey) }), ...errorResponses(401, 403, 500) },
    summary: 'Your API keys, newest first, with their live counters',
    ...meta({ session: true, auth: 'bearer', tag: 'Dashboard', access: 'account' }),
  },
  createApiKey: {
    method: 'POST',
    path: '/v1/keys',
    body: dashboard.CreateApiKeyBody,
    responses: { 201: dashboard.CreatedApiKey, ...errorResponses(400, 401, 403, 500) },
    summary: 'Create an API key (the key is in this response only)',
    description:
      'With the dashboard session only (and its `X-CSRF-Token`): an API key cannot make keys (403 session_required), so a leaked key cannot outlive its revocation through keys it made. ' +
      'At most the plan’s `max_keys` active keys per user (403 too_many_keys); operators make keys with the admin API or `model-gateway keys create`.',
    ...meta({ auth: 'session', tag: 'Dashboard', noStore: true }),
  },
  revokeApiKey: {
    method: 'POST',
    path: '/v1/keys/:id/revoke',
    pathParams: dashboard.ApiKeyIdParams,
    body: c.noBody(),
    responses: { 200: dashboard.ApiKey, ...errorResponses(401, 403, 404, 500) },
    summary: 'Revoke one of your API keys',
    description:
      'With the dashboard session only (and its `X-CSRF-Token`; an API key gets 403 session_required). Every instance refuses the key within the key-cache TTL (5 s by default); this one at once. ' +
      'Revoking a revoked key answers it unchanged. Its usage today still counts toward your per-user limits.',
    ...meta({ auth: 'session', tag: 'Dashboard', notFound: { code: 'key_not_found', what: 'API key' } }),
  },
  listJobs: {
    method: 'GET',
    path: '/v1/jobs',
    query: dashboard.JobListQuery,
    responses: { 200: dashboard.JobList, ...errorResponses(400, 401, 403, 500) },
    summary: 'Your recent async jobs (images, video, speech, transcription), newest first',
    description: 'With an API key: the jobs of that key; with the dashboard session: the jobs of all your keys.',
    ...meta({ session: true, auth: 'bearer', tag: 'Dashboard', access: 'account' }),
  },
});

const AppIdParams = z.object({ id: prefixedId('app', 'an app') });

const oauthErrors = { 400: OAuthErrorBody, 401: OAuthErrorBody, 403: OAuthErrorBody, 500: OAuthErrorBody };

const oauthRoutes = c.router({
  authorize: {
    method: 'GET',
    path: '/v1/oauth/authorize',
    query: oauth.AuthorizeQuery,
    responses: {
      200: c.otherResponse({ contentType: 'text/html', body: z.string() }),
      302: c.noBody(),
      400: c.otherResponse({ contentType: 'text/html', body: z.string() }),
    },
    summary: 'Start the authorization-code flow (browser)',
    description:
      'Signs the user in if needed, shows the consent page, then redirects to redirect_uri with `code` and `state` (or `error=access_denied`). ' +
      'An unknown client or a redirect_uri that is not registered shows an error page and never redirects.',
    ...meta({ auth: 'none', tag: 'OAuth', errorEnvelope: 'page', raw: { 200: { 'text/html': 'the consent page' }, 400: { 'text/html': 'error page' } } }),
  },
  token: {
    method: 'POST',
    path: '/v1/oauth/token',
    contentType: 'application/x-www-form-urlencoded',
    body: oauth.TokenRequest,
    responses: { 200: oauth.TokenResponse, ...oauthErrors },
    summary: 'Exchange a code or a refresh token',
    description: 'Client authentication by body fields or HTTP Basic. Each refresh rotates both tokens. Errors use the RFC 6749 body.',
    ...meta({ auth: 'oauth-client', tag: 'OAuth' }),
  },
  me: {
    method: 'GET',
    path: '/v1/oauth/me',
    responses: { 200: oauth.UserInfo, ...oauthErrors },
    summary: 'The signed-in user, gated by scope',
    description: '`Authorization: Bearer <ACCESS_TOKEN>`.',
    ...meta({ auth: 'oauth-token', tag: 'OAuth' }),
  },
  revoke: {
    method: 'POST',
    path: '/v1/oauth/revoke',
    contentType: 'application/x-www-form-urlencoded',
    body: oauth.RevokeRequest,
    responses: { 200: z.object({}), ...oauthErrors },
    summary: 'Revoke a grant by one of its tokens',
    description:
      'Access or refresh token; the whole grant (its tokens and its api_key) dies. Answers 200 for unknown tokens too (RFC 7009). ' +
      'Client credentials (HTTP Basic or body) are optional; when sent they are checked (401 invalid_client), and a token issued to another client ' +
      'is refused with 400 unauthorized_client and not revoked.',
    ...meta({ auth: 'oauth-client', tag: 'OAuth' }),
  },
  metadata: {
    method: 'GET',
    path: '/.well-known/oauth-authorization-server',
    responses: { 200: oauth.ServerMetadata },
    summary: 'Authorization server metadata (RFC 8414)',
    description: 'For agent and MCP clients that discover the OAuth endpoints.',
    ...meta({ auth: 'none', tag: 'OAuth' }),
  },
  listApps: {
    method: 'GET',
    path: '/v1/apps',
    responses: { 200: z.object({ data: z.array(oauth.App) }), ...errorResponses(401, 403, 500) },
    summary: 'Your OAuth apps',
    description: 'App management for developers, authenticated by your API key (the dashboard at /apps does the same in a browser).',
    ...meta({ session: true, auth: 'bearer', tag: 'OAuth apps', access: 'account' }),
  },
  createApp: {
    method: 'POST',
    path: '/v1/apps',
    body: oauth.AppInput,
    responses: { 201: oauth.AppWithSecret, ...errorResponses(400, 401, 403, 500) },
    summary: 'Register an OAuth app',
    description: 'At most 5 apps per user (403 too_many_apps). The client secret is in this response only.',
    ...meta({ session: true, auth: 'bearer', tag: 'OAuth apps', access: 'account', noStore: true }),
  },
  rotateAppSecret: {
    method: 'POST',
    path: '/v1/apps/:id/rotate-secret',
    pathParams: AppIdParams,
    body: c.noBody(),
    responses: { 200: oauth.AppWithSecret, ...errorResponses(401, 403, 404, 500) },
    summary: 'Rotate an app’s client secret',
    description: 'The old secret stops working at once.',
    ...meta({ session: true, auth: 'bearer', tag: 'OAuth apps', access: 'account', notFound: { code: 'app_not_found', what: 'app' }, noStore: true }),
  },
  deleteApp: {
    method: 'DELETE',
    path: '/v1/apps/:id',
    pathParams: AppIdParams,
    body: c.noBody(),
    responses: { 204: c.noBody(), ...errorResponses(401, 403, 404, 500) },
    summary: 'Delete an OAuth app (and every grant and token of it)',
    ...meta({ session: true, auth: 'bearer', tag: 'OAuth apps', access: 'account', notFound: { code: 'app_not_found', what: 'app' } }),
  },
  listConnectedApps: {
    method: 'GET',
    path: '/v1/connected-apps',
    responses: { 200: z.object({ data: z.array(oauth.ConnectedApp) }), ...errorResponses(401, 403, 500) },
    summary: 'Apps you granted access',
    ...meta({ session: true, auth: 'bearer', tag: 'OAuth apps', access: 'account' }),
  },
  revokeConnectedApp: {
    method: 'DELETE',
    path: '/v1/connected-apps/:id',
    pathParams: z.object({ id: prefixedId('grt', 'a connected app') }),
    body: c.noBody(),
    responses: { 204: c.noBody(), ...errorResponses(401, 403, 404, 500) },
    summary: 'Revoke an app’s access (its access and refresh tokens die at once)',
    ...meta({ session: true, auth: 'bearer', tag: 'OAuth apps', access: 'account', notFound: { code: 'grant_not_found', what: 'connected app' } }),
  },
});

// 403: a signed-in user without the admin role, or a change without the session's CSRF token.
const adminErrors = errorResponses(400, 401, 403, 404, 500);
const adminRoutes = c.router({
  listUsers: {
    method: 'GET',
    path: '/admin/v1/users',
    query: dashboard.UserListQuery,
    responses: { 200: z.object({ data: z.array(admin.AdminUser) }), ...adminErrors },
    summary: 'List or search users (oldest first)',
    ...meta({ session: true, auth: 'admin', tag: 'Admin' }),
  },
  createUser: {
    method: 'POST',
    path: '/admin/v1/users',
    body: admin.CreateUserBody,
    responses: { 201: admin.AdminUser, 409: ErrorBody, ...adminErrors },
    summary: 'Create a user',
    ...meta({ session: true, auth: 'admin', tag: 'Admin' }),
  },
  updateUser: {
    method: 'PATCH',
    path: '/admin/v1/users/:user',
    pathParams: admin.UserRef,
    body: dashboard.UpdateUserBody,
    responses: { 200: admin.AdminUser, ...adminErrors },
    summary: "Change a user's plan or role, or disable or enable the user",
    description: 'Running gateways apply a plan change or a disabling within the key-cache TTL (5 s by default). An admin cannot disable or demote themselves.',
    ...meta({ session: true, auth: 'admin', tag: 'Admin', notFound: { code: 'user_not_found', what: 'user' } }),
  },
  setUserPassword: {
    method: 'POST',
    path: '/admin/v1/users/:user/password',
    pathParams: admin.UserRef,
    body: admin.SetPasswordBody,
    responses: { 200: admin.PasswordSet, 409: ErrorBody, ...adminErrors },
    summary: "Set a user's password",
    description:
      'The sign-up rules apply (400 `weak_password` names the broken one). Ends every dashboard session of the user and voids their unused reset links. ' +
      '409 `password_signin_disabled` when `auth.local.enabled` is false. The password is never logged.',
    ...meta({ session: true, auth: 'admin', tag: 'Admin', notFound: { code: 'user_not_found', what: 'user' } }),
  },
  createPasswordResetLink: {
    method: 'POST',
    path: '/admin/v1/users/:user/password-reset',
    pathParams: admin.UserRef,
    body: admin.ResetLinkBody,
    responses: { 201: admin.PasswordResetLink, 409: ErrorBody, ...adminErrors },
    summary: 'Make a single-use password-reset link for a user',
    description:
      'The link opens a page where the user chooses a password (sign-up rules); it works once, until `expires_at`, and a newer link voids it. ' +
      'Using it ends the user’s other sessions. Its address is `public_url`, else the address the gateway listens on (never the request’s Host). ' +
      '409 `user_disabled` for a disabled user, `password_signin_disabled` when `auth.local.enabled` is false.',
    ...meta({ session: true, auth: 'admin', tag: 'Admin', notFound: { code: 'user_not_found', what: 'user' }, noStore: true }),
  },
  listKeys: {
    method: 'GET',
    path: '/admin/v1/keys',
    query: admin.KeyListQuery,
    responses: { 200: z.object({ data: z.array(admin.AdminApiKey) }), ...adminErrors },
    summary: 'List API keys (never the keys themselves)',
    ...meta({ session: true, auth: 'admin', tag: 'Admin' }),
  },
  createKey: {
    method: 'POST',
    path: '/admin/v1/keys',
    body: admin.CreateKeyBody,
    responses: { 201: admin.AdminCreatedApiKey, ...adminErrors },
    summary: 'Create an API key (plaintext returned once)',
    ...meta({ session: true, auth: 'admin', tag: 'Admin', noStore: true }),
  },
  revokeKey: {
    method: 'POST',
    path: '/admin/v1/keys/:id/revoke',
    pathParams: admin.KeyRef,
    body: c.noBody(),
    responses: { 200: admin.AdminApiKey, ...adminErrors },
    summary: 'Revoke an API key',
    description: 'Running gateways stop accepting it within the key-cache TTL (5 s by default).',
    ...meta({ session: true, auth: 'admin', tag: 'Admin', notFound: { code: 'key_not_found', what: 'API key' } }),
  },
  listPlans: {
    method: 'GET',
    path: '/admin/v1/plans',
    responses: { 200: z.object({ data: z.array(dashboard.Plan) }), ...adminErrors },
    summary: 'The configured plans, lowest rank first',
    ...meta({ session: true, auth: 'admin', tag: 'Admin' }),
  },
  adminUsage: {
    method: 'GET',
    path: '/admin/v1/usage',
    query: dashboard.AdminUsageQuery,
    responses: { 200: dashboard.AdminUsageReport, ...adminErrors },
    summary: 'Usage across users: top users and models, per-day totals',
    ...meta({ session: true, auth: 'admin', tag: 'Admin' }),
  },
});

const Health = z.object({ status: z.enum(['ok', 'unavailable']), checks: z.record(z.string(), z.string()).optional() });
const operatorRoutes = c.router({
  healthz: {
    method: 'GET',
    path: '/healthz',
    responses: { 200: Health },
    summary: 'Liveness: the process is up',
    ...meta({ auth: 'none', tag: 'Operations' }),
  },
  readyz: {
    method: 'GET',
    path: '/readyz',
    responses: { 200: Health, 503: Health },
    summary: 'Readiness: the database and the counter store answer',
    ...meta({ auth: 'none', tag: 'Operations' }),
  },
  metrics: {
    method: 'GET',
    path: '/metrics',
    responses: { 200: c.otherResponse({ contentType: 'text/plain', body: z.string() }) },
    summary: 'Prometheus metrics',
    ...meta({ auth: 'none', tag: 'Operations', raw: { 200: { 'text/plain; version=0.0.4': 'Prometheus text format' } } }),
  },
});

export const contract = c.router({
  inference,
  metadata: metadataRoutes,
  oauth: oauthRoutes,
  dashboard: dashboardRoutes,
  admin: adminRoutes,
  operator: operatorRoutes,
});
export type Contract = typeof contract;

export { ChatCompletionRequest, MessagesRequest, ResponsesRequest };
export { chatStrippedFields } from './chat.ts';
export { responsesStrippedFields, builtInTools } from './responses.ts';
export { CatalogEntry, ModelList } from './models.ts';
export * as schemas from './schemas.ts';
