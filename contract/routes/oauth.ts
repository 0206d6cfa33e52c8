// The OAuth 2.0 provider (authorize, token, userinfo, revoke, metadata) and the management of
// OAuth apps and of the apps a user connected.
import { z } from 'zod';
import { prefixedId } from '../common.ts';
import { OAuthErrorBody, errorResponses } from '../errors.ts';
import * as oauth from '../oauth.ts';
import { c, meta } from './meta.ts';

const AppIdParams = z.object({ id: prefixedId('app', 'an app') });

const oauthErrors = { 400: OAuthErrorBody, 401: OAuthErrorBody, 403: OAuthErrorBody, 500: OAuthErrorBody };

export const oauthRoutes = c.router({
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
