// Google's Gemini API as a client format: Google's error body, the key as `x-goog-api-key` or
// `?key=`, everything under `/v1beta` its own, and the catalog under `/v1` for Google's SDKs.
import { geminiErrorOf } from '../../translate/gemini.ts';
import { headerValue, type ClientFormatSpec } from '../spec.ts';

/**
 * Google's SDKs (apiVersion v1, @google/genai's default) read the catalog at `GET /v1/models` and
 * `GET /v1/models/{model}`, which are the OpenAI-shaped catalog's paths: a request carrying Google's
 * credential (`x-goog-api-key`, or `?key=`) is served the Gemini-shaped catalog of /v1beta instead.
 */
export function geminiCatalogPath(method: string | undefined, url: string, googleKeyHeader: boolean): string {
  if (method !== 'GET' || !url.startsWith('/v1/models') || url.startsWith('/v1/models/status')) return url;
  const rest = url.slice('/v1/models'.length);
  if (rest !== '' && rest[0] !== '/' && rest[0] !== '?') return url;
  return googleKeyHeader || /[?&]key=/.test(rest) ? `/v1beta/models${rest}` : url;
}

export const geminiClientFormat: ClientFormatSpec = {
  name: 'gemini',
  envelope: 'google',
  errorBody: geminiErrorOf,
  credential: {
    scheme: 'google',
    headers: ['x-goog-api-key'],
    // The SDKs and Gemini CLI send the header; curl examples and REST users `?key=`.
    read: (headers, query) => {
      const header = headerValue(headers['x-goog-api-key']);
      if (header) return header;
      const key = (query as Record<string, unknown> | undefined)?.key;
      return typeof key === 'string' && key ? key : undefined;
    },
    missing: 'Missing API key. Send it as `x-goog-api-key: <API_KEY>`, as the `key` query parameter, or as `Authorization: Bearer <API_KEY>`.',
  },
  prefix: '/v1beta',
  rewriteUrl: (method, url, has) => geminiCatalogPath(method, url, has('x-goog-api-key')),
};
