// What every route file shares: the ts-rest contract builder and the facts each route declares
// beside its shape (its metadata), which the server and the OpenAPI generator both read.
import { initContract } from '@ts-rest/core';
import type { z } from 'zod';

export const c = initContract();

/**
 * `google`: Gemini's API (its SDKs and Gemini CLI): the credential in `x-goog-api-key`, the `key`
 * query parameter, or `Authorization: Bearer`.
 */
type AuthScheme = 'none' | 'bearer' | 'bearer-or-x-api-key' | 'google' | 'admin' | 'oauth-client' | 'oauth-token' | 'session';

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
   * `google`: Google's error body, `{"error": {"code", "message", "status"}}`, as Gemini's API answers.
   * `marked`: the body of the client format whose marker header the request carries (Anthropic's
   * SDKs send `anthropic-version`: the route answers in Anthropic's shape then), the common body
   * otherwise (server/client-formats/).
   */
  errorEnvelope?: 'anthropic' | 'marked' | 'page' | 'google';
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
  /**
   * What the OpenAPI document shows instead of the route's own path, parameters, body and answers,
   * for a route registered with a wildcard (`/v1beta/models/*`) because its real path cannot be one
   * of the router's patterns (`models/{model}:{method}`, where the model id may hold slashes).
   */
  documented?: { path: string; params?: z.ZodObject; body?: z.ZodType; responses?: Record<number, z.ZodType> };
};
export const meta = (m: RouteMeta) => ({ metadata: m });
