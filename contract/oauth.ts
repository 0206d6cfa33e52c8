import { z } from 'zod';
import { storedText } from './common.ts';

/** The scopes an app may ask for: the one list (the server's checks, its metadata and the consent page read it). */
export const OAuthScope = z.enum(['identity', 'email', 'inference']);

// The authorization endpoint checks its parameters itself: an unknown client or redirect URI is an
// error page, every other problem a redirect to the app with `error=` (RFC 6749 §4.1.2.1).
export const AuthorizeQuery = z.looseObject({
  client_id: storedText(2048).optional().describe('Required: the app’s client_id.'),
  redirect_uri: storedText(2048).optional().describe('Required: exactly one of the app’s registered redirect URIs.'),
  response_type: storedText(2048).optional().describe('Required: `code`.'),
  scope: storedText(2048).optional().describe(`Required: a space-separated subset of ${OAuthScope.options.join(', ')}.`),
  state: storedText(2048).optional().describe('Recommended: echoed back on the redirect.'),
  code_challenge: storedText(2048).optional().describe('BASE64URL(SHA256(code_verifier)), 43 characters. Required for public clients.'),
  code_challenge_method: storedText(2048).optional().describe('`S256` (the only method; `plain` is refused).'),
});

// What the server checks, declared: the consent page links to these.
const httpUrl = z.string().max(2000).regex(/^https?:\/\/[^\s\u0000]+$/, { message: 'must be an http(s) URL' });

export const AppInput = z
  .object({
    name: storedText(100).min(1),
    description: storedText(1000).optional(),
    redirect_uris: z.array(storedText(2000)).min(1).max(20).describe('Exact match; HTTPS, or http://localhost / 127.0.0.1; no fragments or wildcards.'),
    homepage_url: httpUrl.nullable().optional(),
    logo_url: httpUrl.nullable().optional(),
    public_client: z.boolean().optional().describe('true: no secret (PKCE only, e.g. SPAs and native apps).'),
  })
  .meta({ id: 'OAuthAppInput' });

export const App = z
  .object({
    id: z.string(),
    client_id: z.string(),
    name: z.string(),
    description: z.string(),
    redirect_uris: z.array(z.string()),
    homepage_url: z.string().nullable(),
    logo_url: z.string().nullable(),
    public_client: z.boolean(),
    created_at: z.string(),
  })
  .meta({ id: 'OAuthApp' });

export const AppWithSecret = App.extend({ client_secret: z.string().nullable().describe('Shown once; only its hash is stored. null for public clients.') }).meta({ id: 'OAuthAppWithSecret' });

export const ConnectedApp = z
  .object({
    id: z.string().describe('The grant id.'),
    app: z.object({ client_id: z.string(), name: z.string(), description: z.string(), homepage_url: z.string().nullable(), logo_url: z.string().nullable() }),
    scopes: z.array(z.string()).describe('Every scope the user granted the app; each token carries those granted when it was issued.'),
    granted_at: z.string(),
    last_used_at: z.string().nullable(),
    api_key: z
      .object({ prefix: z.string().describe('The first characters of the key, never the key.'), created_at: z.string(), last_used_at: z.string().nullable() })
      .nullable()
      .describe('The API key the app received with the inference scope (null: none yet). It dies when the app is revoked.'),
  })
  .meta({ id: 'ConnectedApp' });

export const ServerMetadata = z
  .looseObject({
    issuer: z.string(),
    authorization_endpoint: z.string(),
    token_endpoint: z.string(),
    revocation_endpoint: z.string(),
    userinfo_endpoint: z.string(),
    scopes_supported: z.array(z.string()),
    response_types_supported: z.array(z.string()),
    grant_types_supported: z.array(z.string()),
    code_challenge_methods_supported: z.array(z.string()),
    token_endpoint_auth_methods_supported: z.array(z.string()),
  })
  .meta({ id: 'OAuthServerMetadata', description: 'RFC 8414 authorization server metadata.' });

export const TokenRequest = z
  .looseObject({
    grant_type: storedText(64).optional().describe('Required: `authorization_code` or `refresh_token`.'),
    code: storedText(256).optional(),
    redirect_uri: storedText(2048).optional(),
    code_verifier: z.string().regex(/^[A-Za-z0-9._~-]{43,128}$/).optional(),
    refresh_token: storedText(256).optional(),
    client_id: storedText(256).optional().describe('Or HTTP Basic.'),
    client_secret: storedText(256).optional().describe('Or HTTP Basic; omitted by public clients using PKCE.'),
  })
  .meta({ id: 'OAuthTokenRequest', description: 'application/x-www-form-urlencoded (RFC 6749) or JSON.' });

export const TokenResponse = z
  .object({
    access_token: z.string(),
    token_type: z.literal('Bearer'),
    expires_in: z.literal(3600),
    refresh_token: z.string(),
    scope: z.string(),
  })
  .meta({ id: 'OAuthTokenResponse' });

export const UserInfo = z
  .object({
    sub: z.string().describe('The user id (OpenID Connect name). Present with identity.'),
    id: z.string().optional().describe('identity scope: same as sub.'),
    username: z.string().nullable().optional().describe('identity scope.'),
    avatar_url: z.string().nullable().optional().describe('identity scope.'),
    plan: z.string().optional().describe('identity scope: the current plan id.'),
    email: z.string().nullable().optional().describe('email scope.'),
    email_verified: z.boolean().optional().describe('email scope.'),
    api_key: z
      .string()
      .optional()
      .describe(
        'inference scope: an API key bound to this user+app grant, the same on every call and across refreshes. It works on inference endpoints only, ' +
          'is billed together with the app’s access tokens (one usage and quota), and dies when the grant is revoked.',
      ),
    scope: z.string().describe('The scopes this access token was issued with.'),
  })
  .meta({ id: 'OAuthUserInfo', description: 'The signed-in user; fields are gated by the granted scopes (docs/oauth.md).' });

export const RevokeRequest = z.looseObject({ token: storedText(256).optional(), token_type_hint: storedText(64).optional() }).meta({ id: 'OAuthRevokeRequest' });
