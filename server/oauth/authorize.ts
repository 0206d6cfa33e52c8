// The authorization request (RFC 6749 §4.1.1 + PKCE): checked the same way when the consent page
// is shown and when the user's decision comes back.
import type { z } from 'zod';
import type { AuthorizeQuery } from '../../contract/oauth.ts';
import type { OAuthService } from './service.ts';
import { SCOPES } from './service.ts';

/** The authorization request's parameters, as the contract declares them (all checked here). */
export type AuthorizeParams = Pick<z.infer<typeof AuthorizeQuery>, 'client_id' | 'redirect_uri' | 'response_type' | 'scope' | 'state' | 'code_challenge' | 'code_challenge_method'>;

type App = NonNullable<Awaited<ReturnType<OAuthService['clientById']>>>;

export type AuthorizeCheck =
  /** Show an error page; never redirect (unknown client or unregistered redirect URI). */
  | { kind: 'page'; title: string; message: string }
  /** Send the error back to the app. */
  | { kind: 'redirect'; location: string }
  | { kind: 'ok'; app: App; scopes: string[]; params: Required<Pick<AuthorizeParams, 'client_id' | 'redirect_uri'>> & AuthorizeParams };

export function redirectWith(redirectUri: string, params: Record<string, string | undefined>): string {
  const u = new URL(redirectUri);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) u.searchParams.set(k, v);
  return u.toString();
}

export async function checkAuthorizeRequest(oauth: OAuthService, q: AuthorizeParams, issuer: string): Promise<AuthorizeCheck> {
  const app = q.client_id ? await oauth.clientById(q.client_id) : null;
  if (!app) return { kind: 'page', title: 'Unknown application', message: 'The application that sent you here is not registered with this gateway (unknown client_id).' };
  if (!q.redirect_uri || !app.redirectUris.includes(q.redirect_uri)) {
    return { kind: 'page', title: 'Invalid redirect', message: `The redirect URI is not one that “${app.name}” registered, so you are not sent back to it.` };
  }
  const fail = (error: string, description: string) => ({ kind: 'redirect' as const, location: redirectWith(q.redirect_uri!, { error, error_description: description, state: q.state, iss: issuer }) });
  if (q.response_type !== 'code') return fail('unsupported_response_type', 'response_type must be code.');
  const scopes = [...new Set((q.scope ?? '').split(' ').filter(Boolean))];
  if (!scopes.length || scopes.some((s) => !(SCOPES as readonly string[]).includes(s))) return fail('invalid_scope', `scope must be a subset of ${SCOPES.join(', ')}.`);
  if (q.code_challenge_method !== undefined && q.code_challenge_method !== 'S256') return fail('invalid_request', 'code_challenge_method must be S256 (plain is not accepted).');
  if (q.code_challenge !== undefined && !/^[A-Za-z0-9_-]{43}$/.test(q.code_challenge)) return fail('invalid_request', 'code_challenge must be BASE64URL(SHA256(code_verifier)).');
  if (q.code_challenge_method && !q.code_challenge) return fail('invalid_request', 'code_challenge is missing.');
  if (!app.secretHash && !q.code_challenge) return fail('invalid_request', 'This client has no secret: PKCE (code_challenge with S256) is required.');
  return { kind: 'ok', app, scopes, params: { ...q, client_id: q.client_id!, redirect_uri: q.redirect_uri } };
}

/** What the consent page says each scope allows: one line for every scope of the contract. */
export const scopeText: Record<string, string> = {
  identity: 'See your user id, username, avatar and plan',
  email: 'See your email address',
  inference: 'Use AI models on your behalf, billed to your plan (with an API key for this app alone, which stops working when you revoke the app)',
} satisfies Record<(typeof SCOPES)[number], string>;
