// The token and revocation endpoints against clients that misbehave or attack: PKCE downgrade,
// malformed requests and credentials, revocation across clients, codes around a revocation and
// replays racing the first exchange. Through oauth4webapi and plain HTTP.
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser } from '../helpers/browser.ts';
import { REDIRECT, insecure, startOAuthGateway, type OAuthGateway, type Registered } from '../helpers/oauth.ts';

let t: OAuthGateway;
let user: Browser;
let app: Registered;

beforeAll(async () => {
  t = await startOAuthGateway();
  user = new Browser(t.gw.url);
  await user.signUp('tess@example.com');
  app = await t.registerApp();
});
afterAll(() => t?.close());

const basic = (id: string, secret: string) => ({ authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}` });
const clientBasic = (a: Registered) => basic(a.client.client_id, a.secret!);

async function expectOAuthError(res: Response, status: number, error: string) {
  expect(res.status).toBe(status);
  expect(res.headers.get('cache-control')).toBe('no-store');
  const body = (await res.json()) as Record<string, unknown>;
  expect(Object.keys(body).sort()).toEqual(['error', 'error_description']);
  expect(body.error).toBe(error);
  expect(typeof body.error_description).toBe('string');
}

it('a code issued without code_challenge refuses any code_verifier (PKCE downgrade)', async () => {
  const a = await t.authorize(app, user, 'identity', false);
  await expect(t.exchange(app, a.params, oauth.generateRandomCodeVerifier())).rejects.toMatchObject({ error: 'invalid_grant' });
  // The same kind of code without a verifier is a plain confidential-client exchange.
  const b = await t.authorize(app, user, 'identity', false);
  expect((await t.exchange(app, b.params, oauth.nopkce)).access_token).toMatch(/^mgo_at_/);
});

describe('request-validation errors on the OAuth endpoints answer {error, error_description} with Cache-Control: no-store', () => {
  const cases: [string, RequestInit][] = [
    ['a short code_verifier', { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=authorization_code&code=x&code_verifier=short' }],
    ['wrong JSON types', { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ grant_type: 5, token: ['x'] }) }],
    ['a text/plain body', { headers: { 'content-type': 'text/plain' }, body: 'grant_type=authorization_code' }],
    ['malformed JSON', { headers: { 'content-type': 'application/json' }, body: '{"grant_type": ' }],
    ['an empty JSON body', { headers: { 'content-type': 'application/json' }, body: '' }],
    ['no body at all', {}],
  ];
  it.each(cases)('token endpoint: %s', async (_what, init) => {
    await expectOAuthError(await t.gw.fetch('/v1/oauth/token', { method: 'POST', ...init }), 400, 'invalid_request');
  });
  it.each(cases)('revocation endpoint: %s', async (_what, init) => {
    await expectOAuthError(await t.gw.fetch('/v1/oauth/revoke', { method: 'POST', ...init }), 400, 'invalid_request');
  });
});

it('malformed HTTP Basic credentials are 401 invalid_client with WWW-Authenticate: Basic, never a 500', async () => {
  for (const header of [basic('%ZZ', 'x').authorization, `Basic ${Buffer.from('no-colon').toString('base64')}`, 'Basic !!!']) {
    const res = await t.post('/v1/oauth/token', { grant_type: 'refresh_token', refresh_token: 'x' }, { authorization: header });
    expect(res.headers.get('www-authenticate'), header).toMatch(/^Basic/);
    await expectOAuthError(res, 401, 'invalid_client');
  }
});

it('HTTP Basic plus a client_secret in the body is 400 invalid_request (more than one authentication method)', async () => {
  const a = await t.authorize(app, user, 'identity');
  const res = await t.post('/v1/oauth/token', { grant_type: 'authorization_code', code: a.params.get('code')!, redirect_uri: REDIRECT, code_verifier: a.verifier, client_secret: app.secret! }, clientBasic(app));
  await expectOAuthError(res, 400, 'invalid_request');
});

describe('revocation checks the client', () => {
  it('a wrong client secret is 401 invalid_client and revokes nothing', async () => {
    const a = await t.authorize(app, user);
    const tokens = await t.exchange(app, a.params, a.verifier);
    const res = await t.post('/v1/oauth/revoke', { token: tokens.access_token }, basic(app.client.client_id, 'mgcs_wrong'));
    expect(res.headers.get('www-authenticate')).toMatch(/^Basic/);
    await expectOAuthError(res, 401, 'invalid_client');
    const body = await t.post('/v1/oauth/revoke', { token: tokens.access_token, client_id: app.client.client_id, client_secret: 'mgcs_wrong' });
    await expectOAuthError(body, 401, 'invalid_client');
    expect((await t.me(tokens.access_token)).status).toBe(200);
  });

  it("a client cannot revoke a token issued to another client (unauthorized_client; the token keeps working)", async () => {
    const a = await t.authorize(app, user);
    const tokens = await t.exchange(app, a.params, a.verifier);
    const other = await t.registerApp({ name: 'Other' });
    const res = await t.post('/v1/oauth/revoke', { token: tokens.refresh_token! }, clientBasic(other));
    await expectOAuthError(res, 400, 'unauthorized_client');
    expect((await t.me(tokens.access_token)).status).toBe(200);
    // Its own client may, and an unknown token is still 200 (RFC 7009).
    await oauth.processRevocationResponse(await oauth.revocationRequest(t.as, app.client, t.auth(app), tokens.refresh_token!, insecure));
    expect((await t.me(tokens.access_token)).status).toBe(401);
    expect((await t.post('/v1/oauth/revoke', { token: 'mgo_at_unknown' }, clientBasic(other))).status).toBe(200);
  });
});

it('a code issued before the grant was revoked cannot be exchanged afterwards', async () => {
  const first = await t.authorize(app, user);
  const tokens = await t.exchange(app, first.params, first.verifier);
  const pending = await t.authorize(app, user);
  await oauth.processRevocationResponse(await oauth.revocationRequest(t.as, app.client, t.auth(app), tokens.access_token, insecure));
  await expect(t.exchange(app, pending.params, pending.verifier)).rejects.toMatchObject({ error: 'invalid_grant' });
});

it('a replay racing the first exchange revokes the grant like any replay', async () => {
  // Several rounds: in each, two exchanges of one code race; whichever wins, its tokens must die.
  for (let round = 0; round < 4; round++) {
    const a = await t.authorize(app, user);
    const results = await Promise.allSettled([t.exchange(app, a.params, a.verifier), t.exchange(app, a.params, a.verifier)]);
    const won = results.filter((r): r is PromiseFulfilledResult<oauth.TokenEndpointResponse> => r.status === 'fulfilled');
    expect(won.length, `round ${round}`).toBeLessThanOrEqual(1);
    for (const w of won) expect((await t.me(w.value.access_token)).status, `round ${round}`).toBe(401);
  }
});
