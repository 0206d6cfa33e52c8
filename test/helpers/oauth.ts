// An OAuth client's side of the flow against a running gateway, through oauth4webapi (a real
// OAuth client library) and the gateway's own pages (the Browser helper).
import * as oauth from 'oauth4webapi';
import type { Logger } from 'pino';
import { expect } from 'vitest';
import { Browser } from './browser.ts';
import { startTextGateway } from './text-gateway.ts';

export const REDIRECT = 'http://127.0.0.1:4567/callback';
export const insecure = { [oauth.allowInsecureRequests]: true };

export type Registered = { client: oauth.Client; secret: string | null; id: string; ownerKey: string };

export async function startOAuthGateway(extra = '', logger?: Logger, plans?: string) {
  // Users sign up to consent (anyone may here: sign-up is closed by default, decision 0033).
  const t = await startTextGateway(`auth: { local: { allow_signup: true } }\n${extra}`, logger, plans);
  const issuer = new URL(t.gw.url);
  const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
  const gw = t.gw;

  /** A developer registers an app through the JSON management API with their API key. */
  async function registerApp(opts: { public?: boolean; name?: string } = {}): Promise<Registered> {
    const ownerKey = await gw.newKey();
    const res = await gw.fetch('/v1/apps', { method: 'POST', key: ownerKey, json: { name: opts.name ?? 'Test App', description: 'Does tests', redirect_uris: [REDIRECT], homepage_url: 'https://app.example', public_client: opts.public ?? false } });
    expect(res.status).toBe(201);
    const app: any = await res.json();
    return { client: { client_id: app.client_id, token_endpoint_auth_method: opts.public ? 'none' : 'client_secret_basic' }, secret: app.client_secret, id: app.id, ownerKey };
  }

  /** The user approves (or denies) on the consent page; returns the redirect the browser lands on. */
  async function consent(user: Browser, params: Record<string, string>, decision: 'approve' | 'deny' = 'approve'): Promise<URL> {
    const url = new URL('/v1/oauth/authorize', gw.url);
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    const page = await user.get(url.pathname + url.search);
    expect(page.status).toBe(200);
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    const fields = Browser.fields(await page.text());
    const res = await user.post('/oauth/consent', { ...fields, decision });
    expect(res.status).toBe(303);
    return new URL(res.headers.get('location')!);
  }

  /** Consent with PKCE (or without it: `pkce: false`); the code's parameters and its verifier. */
  async function authorize(app: Registered, user: Browser, scope = 'identity email inference', pkce = true) {
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const challenge: Record<string, string> = pkce ? { code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' } : {};
    const landed = await consent(user, { client_id: app.client.client_id, redirect_uri: REDIRECT, response_type: 'code', scope, state, ...challenge });
    const params = oauth.validateAuthResponse(as, app.client, landed, state);
    return { params, verifier, landed };
  }

  const auth = (app: Registered, basic = true) => (app.secret ? (basic ? oauth.ClientSecretBasic(app.secret) : oauth.ClientSecretPost(app.secret)) : oauth.None());

  async function exchange(app: Registered, params: URLSearchParams, verifier: string | typeof oauth.nopkce, basic = true) {
    const res = await oauth.authorizationCodeGrantRequest(as, app.client, auth(app, basic), params, REDIRECT, verifier, insecure);
    return oauth.processAuthorizationCodeResponse(as, app.client, res);
  }

  async function refresh(app: Registered, refreshToken: string) {
    return oauth.processRefreshTokenResponse(as, app.client, await oauth.refreshTokenGrantRequest(as, app.client, auth(app), refreshToken, insecure));
  }

  const me = (token: string) => gw.fetch('/v1/oauth/me', { headers: { authorization: `Bearer ${token}` } });
  const chat = (credential: string) => gw.fetch('/v1/chat/completions', { method: 'POST', key: credential, json: { model: 'openai-text', messages: [{ role: 'user', content: 'hi' }] } });
  /** A form-encoded POST to an OAuth endpoint, headers as given (e.g. HTTP Basic). */
  const post = (path: string, form: Record<string, string>, headers: Record<string, string> = {}) =>
    gw.fetch(path, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams(form).toString() });

  return { ...t, as, registerApp, consent, authorize, auth, exchange, refresh, me, chat, post };
}

export type OAuthGateway = Awaited<ReturnType<typeof startOAuthGateway>>;
