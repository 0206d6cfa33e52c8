// Gemini's own API as a client format: the routes Google's SDKs (@google/genai) and Gemini CLI call
// with a custom base URL. A model id may hold slashes and the method follows a colon in the same
// segment (`models/{model}:generateContent`), which no path parameter can express: each route takes
// the rest of the path, and `documented` gives the OpenAPI document the path Google writes.
import { z } from 'zod';
import { GeminiCountTokensRequest, GeminiCountTokensResponse, GeminiErrorBody, GeminiGenerateContentRequest, GeminiGenerateContentResponse, GeminiModel, GeminiModelList } from '../gemini.ts';
import { c, meta } from './meta.ts';

/** Every error of these routes, in Google's shape. */
const googleErrors = Object.fromEntries([400, 401, 403, 404, 413, 429, 500, 502, 503].map((s) => [s, GeminiErrorBody])) as Record<400 | 401 | 403 | 404 | 413 | 429 | 500 | 502 | 503, typeof GeminiErrorBody>;

/** The methods a model path ends with. */
export const GeminiModelMethod = z.enum(['generateContent', 'streamGenerateContent', 'countTokens']).meta({ id: 'GeminiModelMethod' });

const ModelMethodParams = z.object({
  model: z.string().describe('A model id of `GET /v1beta/models` (with or without `models/`); it may contain slashes.'),
  method: GeminiModelMethod,
});

export const GeminiModelQuery = z.looseObject({
  alt: z.string().optional().describe('`sse` streams `streamGenerateContent` as server-sent events; without it the stream is one JSON array of chunks.'),
  key: z.string().optional().describe('The API key, as Google’s REST examples send it (or `x-goog-api-key`, or `Authorization: Bearer`).'),
});

/** The rest of the path after `models/`: the router's wildcard. */
const RestOfPath = z.object({ '*': z.string() });

/** The body is read by the method the path names: checked there, against the schema the document shows. */
const ModelMethodBody = z.looseObject({});

const methodDescription =
  '`generateContent`, `streamGenerateContent` and `countTokens` for every text model of the catalog: passed through to Gemini upstreams, translated for the others ' +
  '(system instructions, contents with inline or URL images, function declarations, calls and responses, `toolConfig`, `generationConfig` with ' +
  '`responseSchema`/`responseJsonSchema` and `thinkingConfig`); what another provider cannot take is dropped and named in `X-Gateway-Warnings`. ' +
  'Credentials: `x-goog-api-key`, `?key=` or `Authorization: Bearer` (an API key or an OAuth access token). Billed, rate-limited and recorded like ' +
  'the other text formats; `countTokens` asks the first upstream that counts (else the gateway’s o200k_base tokenizer, `X-Gateway-Token-Count: estimate`) and bills nothing. ' +
  'Errors in Google’s shape.';

const modelMethod = (prefix: '/v1beta' | '/v1') => ({
  method: 'POST' as const,
  path: `${prefix}/models/*`,
  pathParams: RestOfPath,
  query: GeminiModelQuery,
  body: ModelMethodBody,
  responses: { 200: GeminiGenerateContentResponse, ...googleErrors },
  summary: prefix === '/v1beta' ? 'Generate content, stream it, or count its tokens (Gemini format)' : 'The Gemini-format methods under /v1 (as Google’s clients with apiVersion v1 call them)',
  description: methodDescription,
  ...meta({
    auth: 'google',
    tag: 'Text',
    errorEnvelope: 'google',
    stream: GeminiGenerateContentResponse,
    documented: {
      path: `${prefix}/models/{model}:{method}`,
      params: ModelMethodParams,
      body: z.union([GeminiGenerateContentRequest, GeminiCountTokensRequest]),
      responses: { 200: z.union([GeminiGenerateContentResponse, GeminiCountTokensResponse]) },
    },
  }),
});

/** Routes a capability serves (bound with the other inference routes). */
export const geminiInferenceRoutes = c.router({
  geminiModelMethod: modelMethod('/v1beta'),
  geminiModelMethodV1: modelMethod('/v1'),
});

/** The catalog in Google's shape. */
export const geminiMetadataRoutes = c.router({
  geminiListModels: {
    method: 'GET',
    path: '/v1beta/models',
    query: z.looseObject({ pageSize: z.coerce.number().int().positive().optional(), pageToken: z.string().optional(), key: z.string().optional() }),
    responses: { 200: GeminiModelList, ...googleErrors },
    summary: 'The text models in Gemini’s shape',
    description:
      'No authentication, like `GET /v1/models` (a key sent is ignored). Every text model of the catalog as `models/{id}` with the methods it supports. ' +
      'Paged by `pageSize` (default 50, at most 1000) and `pageToken`.',
    ...meta({ auth: 'none', tag: 'Models', errorEnvelope: 'google' }),
  },
  geminiGetModel: {
    method: 'GET',
    path: '/v1beta/models/*',
    pathParams: RestOfPath,
    query: z.looseObject({ key: z.string().optional() }),
    responses: { 200: GeminiModel, ...googleErrors },
    summary: 'One text model in Gemini’s shape',
    description: 'No authentication, like `GET /v1/models`. 404 in Google’s shape for a model the catalog does not serve as a text model.',
    ...meta({ auth: 'none', tag: 'Models', errorEnvelope: 'google', documented: { path: '/v1beta/models/{model}', params: z.object({ model: z.string() }) } }),
  },
});
