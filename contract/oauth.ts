import { z } from 'zod';

export const OAuthScope = z.enum(['identity', 'email', 'inference']);

export const AuthorizeQuery = z.looseObject({
  client_id: z.string().min(1),
  redirect_uri: z.string().min(1),
  response_type: z.literal('code'),
  scope: z
    .string()
    .regex(/^(identity|email|inference)( (identity|email|inference))*$/, { message: 'must be a space-separated subset of identity, email, inference' }),
  state: z.string().optional(),
  code_challenge: z.string().regex(/^[A-Za-z0-9_-]{43}$/, { message: 'must be BASE64URL(SHA256(code_verifier))' }).optional(),
  code_challenge_method: z.literal('S256').optional().describe('Only S256; `plain` is refused.'),
});

export const TokenRequest = z
  .looseObject({
    grant_type: z.enum(['authorization_code', 'refresh_token']),
    code: z.string().optional(),
    redirect_uri: z.string().optional(),
    code_verifier: z.string().regex(/^[A-Za-z0-9._~-]{43,128}$/).optional(),
    refresh_token: z.string().optional(),
    client_id: z.string().optional().describe('Or HTTP Basic.'),
    client_secret: z.string().optional().describe('Or HTTP Basic; omitted by public clients using PKCE.'),
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
    api_key: z.string().optional().describe('inference scope: the user’s stable API key.'),
    scope: z.string().describe('The granted scopes.'),
  })
  .meta({ id: 'OAuthUserInfo', description: 'Spec 2.5; fields are gated by the granted scopes.' });

export const RevokeRequest = z.looseObject({ token: z.string().min(1) }).meta({ id: 'OAuthRevokeRequest' });
