// The catalog and what a key or a session reads about its own use: the models, their health, usage,
// and the hosted copies of generated files.
import { z } from 'zod';
import { errorResponses, versionedErrorResponses } from '../errors.ts';
import { AnthropicModelInfo, AnthropicModelList, CatalogEntry, ModelList, ModelListQuery, ModelStatusList, ModelStatusQuery } from '../models.ts';
import { UsageQuery, UsageReport } from '../usage.ts';
import { RequestList, RequestListQuery } from '../requests.ts';
import { c, meta } from './meta.ts';

/** What Anthropic's SDKs send with every request: with it, the catalog answers in Anthropic's shape. */
const anthropicVersion = z.looseObject({
  'anthropic-version': z
    .string()
    .optional()
    .describe('Sent by Anthropic’s SDKs (any value): the answer is in the shape of Anthropic’s Models API, its text models only, and errors carry `"type": "error"`.'),
});

export const metadataRoutes = c.router({
  listModels: {
    method: 'GET',
    path: '/v1/models',
    headers: anthropicVersion,
    query: ModelListQuery,
    responses: { 200: z.union([ModelList, AnthropicModelList]), ...versionedErrorResponses(400, 500) },
    summary: 'The model catalog',
    description:
      'No authentication. Every model this gateway serves, with its endpoint, plan, multiplier and capability metadata; unknown values are null (`ModelList`). ' +
      'With `anthropic-version` (Anthropic’s SDKs), the text models in the shape of Anthropic’s Models API (`AnthropicModelList`), paged by `limit`, `after_id` and `before_id`. ' +
      'With Google’s credential (`x-goog-api-key` or `?key=`), the Gemini-shaped list of `GET /v1beta/models`.',
    ...meta({ auth: 'none', tag: 'Models', errorEnvelope: 'marked' }),
  },
  retrieveModel: {
    method: 'GET',
    // A model id may hold slashes (`openrouter/openai/gpt-4o`): the rest of the path, as the Gemini routes take it.
    path: '/v1/models/*',
    pathParams: z.object({ '*': z.string() }),
    headers: anthropicVersion,
    responses: { 200: z.union([CatalogEntry, AnthropicModelInfo]), ...versionedErrorResponses(404, 500) },
    summary: 'One model of the catalog',
    description:
      'No authentication. The catalog entry of `GET /v1/models` (`CatalogEntry`: OpenAI’s `id`, `object`, `created`, `owned_by` and the gateway’s own fields), as the `openai` SDK’s `models.retrieve` reads it; ' +
      'with `anthropic-version`, Anthropic’s `AnthropicModelInfo` for a text model, as the `@anthropic-ai/sdk` reads it. An id the catalog does not serve is 404 `model_not_found` (`param: "model"`). ' +
      'With Google’s credential (`x-goog-api-key` or `?key=`), the Gemini-shaped model of `GET /v1beta/models/{model}`.',
    ...meta({
      auth: 'none',
      tag: 'Models',
      errorEnvelope: 'marked',
      documented: { path: '/v1/models/{model}', params: z.object({ model: z.string().describe('A model id of `GET /v1/models`; it may contain slashes, sent as they are or as `%2F`.') }) },
    }),
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
  listRequests: {
    method: 'GET',
    path: '/v1/requests',
    query: RequestListQuery,
    responses: { 200: RequestList, ...errorResponses(400, 401, 404, 500) },
    summary: 'The request log: your requests, newest first',
    description:
      'One record per request through /v1 with this key (with the dashboard session: all your keys, or the one named by `key`): status, timings, every upstream attempt, ' +
      'usage and cost from the ledger, warnings, and captured bodies when capture is on. Records are kept `request_log.retention_days` (30 by default). ' +
      'Paged by time with `cursor`; a record appears within about a second of its request ending.',
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
