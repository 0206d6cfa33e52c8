// The authorization-code flow with PKCE, driven by a real OAuth client library (oauth4webapi)
// against the running gateway; the user's side through the gateway's own pages.
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser } from '../helpers/browser.ts';
import { errorBody } from '../helpers/gateway.ts';
import { REDIRECT, insecure, startOAuthGateway, type OAuthGateway, type Registered } from '../helpers/oauth.ts';

let t: OAuthGateway;
let as: oauth.AuthorizationServer;

beforeAll(async () => {
  t = await startOAuthGateway();
  as = t.as;
});
afterAll(() => t?.close());

let user: Browser;
let app: Registered;
beforeAll(async () => {
  user = new Browser(t.gw.url);
  await user.signUp('alice@example.com');
  app = await t.registerApp();
});

it('publishes RFC 8414 metadata', () => {
  expect(as).toMatchObject({
    issuer: t.gw.url,
    authorization_endpoint: `${t.gw.url}/v1/oauth/authorize`,
    token_endpoint: `${t.gw.url}/v1/oauth/token`,
    code_challenge_methods_supported: ['S256'],
    scopes_supported: ['identity', 'email', 'inference'],
  });
});

describe('confidential client', () => {
  it.each([true, false])('code → tokens (HTTP Basic %s), userinfo gated by scope, inference billed to the user', async (basic) => {
    const { params, verifier } = await t.authorize(app, user);
    const tokens = await t.exchange(app, params, verifier, basic);
    expect(tokens).toMatchObject({ token_type: 'bearer', expires_in: 3600, scope: 'identity email inference' });
    expect(tokens.access_token).toMatch(/^mgo_at_/);
    expect(tokens.refresh_token).toMatch(/^mgo_rt_/);
    const info: any = await oauth.processUserInfoResponse(as, app.client, oauth.skipSubjectCheck, await oauth.userInfoRequest(as, app.client, tokens.access_token, insecure));
    expect(info).toMatchObject({ username: 'alice', email: 'alice@example.com', plan: 'free', scope: 'identity email inference' });
    expect(info.api_key).toMatch(/^mg-/);
    // The stable key is a working API key of the user, and the access token bills to it.
    const chat = await t.gw.fetch('/v1/chat/completions', { method: 'POST', key: tokens.access_token, json: { model: 'openai-text', messages: [{ role: 'user', content: 'hi' }] } });
    expect(chat.status).toBe(200);
    await t.gw.services.ledger.flush();
    const record = await t.gw.services.db.prisma.usageRecord.findFirst({ where: { requestId: chat.headers.get('x-request-id')! } });
    const stable = await t.gw.services.keys.authenticate(info.api_key);
    expect(record).toMatchObject({ apiKeyId: stable!.keyId, userId: info.sub, oauthAppId: expect.stringMatching(/^app_/) });
    const usage: any = await (await t.gw.fetch('/v1/usage', { key: tokens.access_token })).json();
    expect(usage.totals.requests).toBeGreaterThan(0);
  });

  it('scopes limit userinfo and inference', async () => {
    const { params, verifier } = await t.authorize(app, user, 'identity');
    const tokens = await t.exchange(app, params, verifier);
    const info: any = await oauth.processUserInfoResponse(as, app.client, oauth.skipSubjectCheck, await oauth.userInfoRequest(as, app.client, tokens.access_token, insecure));
    expect(info).not.toHaveProperty('email');
    expect(info).not.toHaveProperty('api_key');
    const chat = await t.gw.fetch('/v1/chat/completions', { method: 'POST', key: tokens.access_token, json: { model: 'openai-text', messages: [{ role: 'user', content: 'hi' }] } });
    expect(chat.status).toBe(403);
    expect(await errorBody(chat)).toMatchObject({ type: 'permission_error', code: 'insufficient_scope' });
  });

  it('refresh rotates both tokens; reusing an old refresh token revokes the grant', async () => {
    const { params, verifier } = await t.authorize(app, user);
    const first = await t.exchange(app, params, verifier);
    const second = await oauth.processRefreshTokenResponse(as, app.client, await oauth.refreshTokenGrantRequest(as, app.client, t.auth(app), first.refresh_token!, insecure));
    expect(second.access_token).not.toBe(first.access_token);
    expect(second.refresh_token).not.toBe(first.refresh_token);
    const me = (token: string) => t.gw.fetch('/v1/oauth/me', { headers: { authorization: `Bearer ${token}` } });
    expect((await me(first.access_token)).status).toBe(401);
    expect((await me(second.access_token)).status).toBe(200);
    // The old refresh token comes back: theft assumed, the whole grant dies.
    const reuse = await oauth.refreshTokenGrantRequest(as, app.client, t.auth(app), first.refresh_token!, insecure);
    await expect(oauth.processRefreshTokenResponse(as, app.client, reuse)).rejects.toMatchObject({ error: 'invalid_grant' });
    expect((await me(second.access_token)).status).toBe(401);
  });

  it('a replayed code fails and revokes the tokens it produced', async () => {
    const { params, verifier } = await t.authorize(app, user);
    const tokens = await t.exchange(app, params, verifier);
    await expect(t.exchange(app, params, verifier)).rejects.toMatchObject({ error: 'invalid_grant' });
    expect((await t.gw.fetch('/v1/oauth/me', { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(401);
  });

  it('rejects a wrong verifier, a wrong redirect URI, a wrong secret', async () => {
    let a = await t.authorize(app, user);
    await expect(t.exchange(app, a.params, oauth.generateRandomCodeVerifier())).rejects.toMatchObject({ error: 'invalid_grant' });
    a = await t.authorize(app, user);
    const res = await oauth.authorizationCodeGrantRequest(as, app.client, t.auth(app), a.params, 'http://127.0.0.1:4567/other', a.verifier, insecure);
    await expect(oauth.processAuthorizationCodeResponse(as, app.client, res)).rejects.toMatchObject({ error: 'invalid_grant' });
    a = await t.authorize(app, user);
    const bad = await oauth.authorizationCodeGrantRequest(as, app.client, oauth.ClientSecretBasic('mgcs_wrong'), a.params, REDIRECT, a.verifier, insecure);
    expect(bad.status).toBe(401);
    expect(bad.headers.get('cache-control')).toBe('no-store');
    expect(await bad.json()).toMatchObject({ error: 'invalid_client' });
  });

  it('expired codes and access tokens fail (clock moved, not slept)', async () => {
    const clock = t.gw.services.clock;
    const real = clock.now;
    try {
      const a = await t.authorize(app, user);
      clock.now = () => real() + 121_000;
      await expect(t.exchange(app, a.params, a.verifier)).rejects.toMatchObject({ error: 'invalid_grant' });
      clock.now = real;
      const b = await t.authorize(app, user);
      const tokens = await t.exchange(app, b.params, b.verifier);
      clock.now = () => real() + 3_601_000;
      const me = await t.gw.fetch('/v1/oauth/me', { headers: { authorization: `Bearer ${tokens.access_token}` } });
      expect(me.status).toBe(401);
      expect(me.headers.get('www-authenticate')).toContain('invalid_token');
      // The refresh token still works after the access token expired.
      const refreshed = await oauth.processRefreshTokenResponse(as, app.client, await oauth.refreshTokenGrantRequest(as, app.client, t.auth(app), tokens.refresh_token!, insecure));
      expect(refreshed.access_token).toMatch(/^mgo_at_/);
    } finally {
      clock.now = real;
    }
  });

  it('revocation by token kills both tokens of the grant', async () => {
    const { params, verifier } = await t.authorize(app, user);
    const tokens = await t.exchange(app, params, verifier);
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, app.client, t.auth(app), tokens.refresh_token!, insecure));
    expect((await t.gw.fetch('/v1/oauth/me', { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(401);
    const refresh = await oauth.refreshTokenGrantRequest(as, app.client, t.auth(app), tokens.refresh_token!, insecure);
    await expect(oauth.processRefreshTokenResponse(as, app.client, refresh)).rejects.toMatchObject({ error: 'invalid_grant' });
    // Unknown tokens: still 200 (RFC 7009).
    const unknown = await t.gw.fetch('/v1/oauth/revoke', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'token=nope' });
    expect(unknown.status).toBe(200);
  });

  it('the user revokes the app in the dashboard (the API with the session)', async () => {
    const { params, verifier } = await t.authorize(app, user);
    const tokens = await t.exchange(app, params, verifier);
    const grant = (await user.connectedApps()).find((g) => g.app.name === 'Test App')!;
    const res = await user.api('DELETE', `/v1/connected-apps/${grant.id}`);
    expect(res.status).toBe(204);
    expect((await t.gw.fetch('/v1/oauth/me', { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(401);
    const chat = await t.gw.fetch('/v1/chat/completions', { method: 'POST', key: tokens.access_token, json: { model: 'openai-text', messages: [{ role: 'user', content: 'hi' }] } });
    expect(chat.status).toBe(401);
  });

  it('a rotated secret replaces the old one at once', async () => {
    const own = await t.registerApp({ name: 'Rotating' });
    const ownerId = (await t.gw.services.db.prisma.oAuthApp.findUnique({ where: { id: own.id } }))!.ownerId;
    const ownerKey = (await t.gw.services.accounts.createKey({ user: ownerId })).key;
    const rotated: any = await (await t.gw.fetch(`/v1/apps/${own.id}/rotate-secret`, { method: 'POST', key: ownerKey })).json();
    expect(rotated.client_secret).toMatch(/^mgcs_/);
    const a = await t.authorize(own, user);
    await expect(t.exchange(own, a.params, a.verifier)).rejects.toBeDefined();
    const b = await t.authorize(own, user);
    const tokens = await t.exchange({ ...own, secret: rotated.client_secret }, b.params, b.verifier);
    expect(tokens.access_token).toMatch(/^mgo_at_/);
  });
});

describe('public client (PKCE only)', () => {
  it('exchanges with the verifier and no secret; PKCE is required', async () => {
    const pub = await t.registerApp({ public: true, name: 'SPA' });
    expect(pub.secret).toBeNull();
    const { params, verifier } = await t.authorize(pub, user, 'identity');
    const tokens = await t.exchange(pub, params, verifier);
    expect(tokens.scope).toBe('identity');
    // Without a code_challenge the authorize request bounces back with an error.
    const landed = await user.get(`/v1/oauth/authorize?client_id=${pub.client.client_id}&redirect_uri=${encodeURIComponent(REDIRECT)}&response_type=code&scope=identity&state=s1`);
    expect(landed.status).toBe(302);
    const loc = new URL(landed.headers.get('location')!);
    expect(loc.searchParams.get('error')).toBe('invalid_request');
    expect(loc.searchParams.get('state')).toBe('s1');
    const plain = await user.get(`/v1/oauth/authorize?client_id=${pub.client.client_id}&redirect_uri=${encodeURIComponent(REDIRECT)}&response_type=code&scope=identity&code_challenge=abc&code_challenge_method=plain`);
    expect(new URL(plain.headers.get('location')!).searchParams.get('error')).toBe('invalid_request');
  });
});

describe('authorize endpoint', () => {
  it('an unknown client or unregistered redirect shows an error page and never redirects', async () => {
    let res = await user.get(`/v1/oauth/authorize?client_id=nope&redirect_uri=${encodeURIComponent(REDIRECT)}&response_type=code&scope=identity`);
    expect(res.status).toBe(400);
    expect(res.headers.get('location')).toBeNull();
    expect(await res.text()).toContain('Unknown application');
    res = await user.get(`/v1/oauth/authorize?client_id=${app.client.client_id}&redirect_uri=${encodeURIComponent(REDIRECT + '/')}&response_type=code&scope=identity`);
    expect(res.status).toBe(400);
    expect(res.headers.get('location')).toBeNull();
  });

  it('invalid scope and response type go back to the app; deny is access_denied with the state', async () => {
    const base = `/v1/oauth/authorize?client_id=${app.client.client_id}&redirect_uri=${encodeURIComponent(REDIRECT)}&state=xyz`;
    let res = await user.get(`${base}&response_type=code&scope=admin`);
    expect(new URL(res.headers.get('location')!).searchParams.get('error')).toBe('invalid_scope');
    res = await user.get(`${base}&response_type=token&scope=identity`);
    expect(new URL(res.headers.get('location')!).searchParams.get('error')).toBe('unsupported_response_type');
    const landed = await t.consent(user, { client_id: app.client.client_id, redirect_uri: REDIRECT, response_type: 'code', scope: 'identity', state: 'xyz' }, 'deny');
    expect(landed.searchParams.get('error')).toBe('access_denied');
    expect(landed.searchParams.get('state')).toBe('xyz');
  });

  it('sends a visitor who is not signed in to sign in first, then back', async () => {
    const visitor = new Browser(t.gw.url);
    const q = `/v1/oauth/authorize?client_id=${app.client.client_id}&redirect_uri=${encodeURIComponent(REDIRECT)}&response_type=code&scope=identity&state=s`;
    const res = await visitor.get(q);
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe(`/signin?next=${encodeURIComponent(q)}`);
    await visitor.signUp('bob@example.com');
    const signin = new Browser(t.gw.url);
    const form = Browser.fields(await (await signin.get(res.headers.get('location')!)).text());
    const back = await signin.post('/signin', { ...form, email: 'bob@example.com', password: 'correct horse battery' });
    expect(back.headers.get('location')).toBe(q);
    expect((await signin.get(q)).status).toBe(200);
  });

  it('refuses consent posted without the CSRF token', async () => {
    const res = await user.post('/oauth/consent', { client_id: app.client.client_id, redirect_uri: REDIRECT, response_type: 'code', scope: 'identity', decision: 'approve' });
    expect(res.status).toBe(403);
  });
});

describe('app management', () => {
  it('validates redirect URIs and caps apps at 5 per user', async () => {
    const key = await t.gw.newKey();
    const create = (redirect_uris: string[]) => t.gw.fetch('/v1/apps', { method: 'POST', key, json: { name: 'x', redirect_uris } });
    for (const bad of ['http://example.com/cb', 'https://example.com/cb#frag', 'https://*.example.com/cb', 'not a url']) {
      const res = await create([bad]);
      expect(res.status, bad).toBe(400);
      expect((await errorBody(res)).param).toBe('redirect_uris[0]');
    }
    for (let i = 0; i < 5; i++) expect((await create([`https://example.com/cb${i}`, 'http://localhost:3000/cb'])).status).toBe(201);
    const sixth = await create(['https://example.com/cb6']);
    expect(sixth.status).toBe(403);
    expect(await errorBody(sixth)).toMatchObject({ code: 'too_many_apps' });
    const list: any = await (await t.gw.fetch('/v1/apps', { key })).json();
    expect(list.data).toHaveLength(5);
    expect(JSON.stringify(list)).not.toContain('mgcs_');
    expect((await t.gw.fetch(`/v1/apps/${list.data[0].id}`, { method: 'DELETE', key })).status).toBe(204);
  });
});
