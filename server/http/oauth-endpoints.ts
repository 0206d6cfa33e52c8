// The OAuth endpoints of the contract: authorize (consent page), token, userinfo, revoke, metadata.
import type { FastifyRequest } from 'fastify';
import type { z } from 'zod';
import type { RevokeRequest, TokenRequest, UserInfo } from '../../contract/oauth.ts';
import type { Services } from './services.ts';
import type { CookieReply } from '../web/sessions.ts';
import { html, page, pageHeaders } from '../web/html.ts';
import { checkAuthorizeRequest, scopeText, type AuthorizeParams } from '../oauth/authorize.ts';
import { OAuthError } from '../oauth/errors.ts';
import { SCOPES, isAccessToken } from '../oauth/service.ts';

export const issuerOf = (services: Services, request: FastifyRequest) => services.config.publicUrl ?? `${request.protocol}://${request.host}`;

export function errorPage(title: string, message: string): string {
  return page(title, html`<h1>${title}</h1><p class="error">${message}</p>`);
}

/** A reply of a literal status: ts-rest checks each against the route's responses in the contract. */
const send = <S extends number, B>(status: S, body: B) => ({ status, body });

/**
 * What these endpoints do with the reply: set headers. ts-rest hands handlers its own view of
 * fastify's reply type, which fastify 5's FastifyReply does not accept; both have this shape.
 */
type HeaderReply = { header(name: string, value: string): HeaderReply; headers(values: Record<string, string>): unknown };
type PageReply = HeaderReply & CookieReply;

export async function authorizeEndpoint(services: Services, request: FastifyRequest, reply: PageReply, q: AuthorizeParams) {
  reply.headers(pageHeaders);
  const check = await checkAuthorizeRequest(services.oauth, q, issuerOf(services, request));
  if (check.kind === 'page') return send(400, errorPage(check.title, check.message));
  if (check.kind === 'redirect') {
    reply.header('location', check.location);
    return send(302, undefined);
  }
  const user = await services.sessions.user(request);
  if (!user) {
    reply.header('location', `/signin?next=${encodeURIComponent(request.url)}`);
    return send(302, undefined);
  }
  const { app, scopes, params } = check;
  const csrf = services.sessions.csrf(request, reply);
  const hidden = Object.entries(params)
    .filter(([, v]) => typeof v === 'string')
    .map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`);
  const body = html`
<div class="app">${app.logoUrl ? html`<img src="${app.logoUrl}" alt="">` : ''}<div><h1>${app.name} wants to access your account</h1>
${app.homepageUrl ? html`<a href="${app.homepageUrl}" rel="noopener noreferrer">${app.homepageUrl}</a>` : ''}</div></div>
${app.description ? html`<p>${app.description}</p>` : ''}
<p>Signed in as <strong>${user.username ?? user.email}</strong>. ${app.name} will be able to:</p>
<ul class="scopes">${scopes.map((s) => html`<li>${scopeText[s] ?? s}</li>`)}</ul>
<form method="post" action="/oauth/consent">
<input type="hidden" name="csrf" value="${csrf}">${hidden}
<button type="submit" name="decision" value="approve" id="approve">Allow</button>
<button type="submit" name="decision" value="deny" class="secondary" id="deny">Deny</button>
</form>
<p><small>You can revoke this at any time under <a href="/connected">Connected apps</a>. You will be sent back to ${new URL(params.redirect_uri).origin}.</small></p>`;
  return send(200, page(`Authorize ${app.name}`, body, user));
}

/** HTTP Basic client credentials (RFC 6749 §2.3.1), null when none are sent; malformed ones fail client authentication. */
function basicAuth(request: FastifyRequest): { id: string; secret: string } | null {
  const h = request.headers.authorization;
  if (!h || !/^Basic\b/i.test(h)) return null;
  const malformed = () => new OAuthError('invalid_client', 'Client authentication failed: malformed HTTP Basic credentials.');
  const m = /^Basic +([A-Za-z0-9+/]+={0,2})$/i.exec(h);
  const decoded = m ? Buffer.from(m[1]!, 'base64').toString('utf8') : '';
  const i = decoded.indexOf(':');
  if (i < 0) throw malformed();
  try {
    // Both parts are form-urlencoded.
    const dec = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '));
    return { id: dec(decoded.slice(0, i)), secret: dec(decoded.slice(i + 1)) };
  } catch {
    throw malformed();
  }
}

/** The client's credentials, by HTTP Basic or in the body — one method only (RFC 6749 §2.3). */
function clientCredentials(request: FastifyRequest, body: { [field: string]: unknown; client_id?: string; client_secret?: string }): { id?: string; secret?: string } {
  const basic = basicAuth(request);
  if (!basic) return { id: body.client_id, secret: body.client_secret };
  if (body.client_secret !== undefined) throw new OAuthError('invalid_request', 'Use one client authentication method: HTTP Basic or client_secret in the body, not both.');
  if (body.client_id !== undefined && body.client_id !== basic.id) throw new OAuthError('invalid_request', 'client_id in the body differs from HTTP Basic.');
  return basic;
}

function oauthFailure(reply: HeaderReply, err: unknown) {
  if (!(err instanceof OAuthError)) throw err;
  if (err.status === 401) reply.header('www-authenticate', err.error === 'invalid_token' ? `Bearer error="invalid_token"` : 'Basic realm="oauth"');
  return send(err.status, err.body());
}

export async function tokenEndpoint(services: Services, request: FastifyRequest, reply: HeaderReply, body: z.infer<typeof TokenRequest>) {
  reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
  try {
    const client = clientCredentials(request, body);
    if (!body.grant_type) throw new OAuthError('invalid_request', 'grant_type is required.');
    if (body.grant_type !== 'authorization_code' && body.grant_type !== 'refresh_token') {
      throw new OAuthError('unsupported_grant_type', 'grant_type must be authorization_code or refresh_token.');
    }
    const app = await services.oauth.authenticateClient(client.id, client.secret);
    const tokens =
      body.grant_type === 'authorization_code' ? await services.oauth.exchangeCode(app, body) : await services.oauth.refresh(app, body.refresh_token);
    return send(200, tokens);
  } catch (err) {
    return oauthFailure(reply, err);
  }
}

export async function userinfoEndpoint(services: Services, request: FastifyRequest, reply: HeaderReply) {
  try {
    const m = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '');
    const found = m && isAccessToken(m[1]!) ? await services.oauth.accessToken(m[1]!) : null;
    if (!found) throw new OAuthError('invalid_token', 'The access token is missing, invalid, expired or revoked.');
    const { user, scopes } = found;
    const out: z.infer<typeof UserInfo> = { sub: user.id, scope: scopes.join(' ') };
    if (scopes.includes('identity')) Object.assign(out, { id: user.id, username: user.username ?? user.name, avatar_url: user.avatarUrl, plan: user.planId });
    if (scopes.includes('email')) out.email = user.email;
    if (scopes.includes('inference')) {
      const key = await services.oauth.grantKey(found.grant);
      if (!key.revoked) out.api_key = key.key;
    }
    reply.header('cache-control', 'no-store');
    return send(200, out);
  } catch (err) {
    return oauthFailure(reply, err);
  }
}

export async function revokeEndpoint(services: Services, request: FastifyRequest, reply: HeaderReply, body: z.infer<typeof RevokeRequest>) {
  reply.header('cache-control', 'no-store');
  try {
    // Credentials are optional (the token is proof enough to give it up), but checked when sent.
    const client = clientCredentials(request, body);
    const app = client.id !== undefined ? await services.oauth.authenticateClient(client.id, client.secret) : null;
    if (!body.token) throw new OAuthError('invalid_request', 'token is required.');
    await services.oauth.revokeToken(String(body.token), app?.id);
    return send(200, {});
  } catch (err) {
    return oauthFailure(reply, err);
  }
}

export function metadataEndpoint(services: Services, request: FastifyRequest) {
  const issuer = issuerOf(services, request);
  return {
    issuer,
    authorization_endpoint: `${issuer}/v1/oauth/authorize`,
    token_endpoint: `${issuer}/v1/oauth/token`,
    revocation_endpoint: `${issuer}/v1/oauth/revoke`,
    userinfo_endpoint: `${issuer}/v1/oauth/me`,
    scopes_supported: [...SCOPES],
    response_types_supported: ['code'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    authorization_response_iss_parameter_supported: true,
    service_documentation: `${issuer}/docs`,
  };
}
