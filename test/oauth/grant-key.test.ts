// The `api_key` an app receives with the inference scope: bound to the user+app grant, for
// inference only, billed together with the app's access tokens, and dead with the grant. And the
// scopes of each token: what was granted when it was issued.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser } from '../helpers/browser.ts';
import { errorBody } from '../helpers/gateway.ts';
import { startOAuthGateway, type OAuthGateway, type Registered } from '../helpers/oauth.ts';

let t: OAuthGateway;
let n = 0;

beforeAll(async () => {
  t = await startOAuthGateway();
});
afterAll(() => t?.close());

/** A fresh user (signed up on the pages) with an API key of their own, and an app. */
async function setup() {
  const user = new Browser(t.gw.url);
  const email = `grant${++n}@example.com`;
  await user.signUp(email);
  const userId = (await t.gw.services.db.prisma.user.findUniqueOrThrow({ where: { email } })).id;
  const ownKey = (await t.gw.services.accounts.createKey({ user: userId })).key;
  const app = await t.registerApp({ name: `App ${n}` });
  return { user, userId, ownKey, app };
}

async function connect(app: Registered, user: Browser, scope = 'identity email inference') {
  const a = await t.authorize(app, user, scope);
  const tokens = await t.exchange(app, a.params, a.verifier);
  const info: any = await (await t.me(tokens.access_token)).json();
  return { tokens, info, apiKey: info.api_key as string | undefined };
}

const connectedApps = async (ownKey: string) => ((await (await t.gw.fetch('/v1/connected-apps', { key: ownKey })).json()) as any).data as any[];

describe('the api_key is bound to the grant', () => {
  it('one key per user+app grant, stable across refreshes and re-consent, never a key for the whole account', async () => {
    const { user, userId, app } = await setup();
    const first = await connect(app, user);
    expect(first.apiKey).toMatch(/^mg-[0-9A-Za-z]{43}$/);
    const refreshed = await t.refresh(app, first.tokens.refresh_token!);
    expect(((await (await t.me(refreshed.access_token)).json()) as any).api_key).toBe(first.apiKey);
    expect((await connect(app, user)).apiKey).toBe(first.apiKey);
    const other = await connect(await t.registerApp({ name: 'Another app' }), user);
    expect(other.apiKey).not.toBe(first.apiKey);
    const keys = await t.gw.services.db.prisma.apiKey.findMany({ where: { userId, revokedAt: null } });
    expect(keys.filter((k) => k.kind === 'oauth_grant')).toHaveLength(2);
    expect(keys.every((k) => k.grantId !== null || k.kind === 'standard')).toBe(true);
  });

  it('sign-up creates no account-wide stable key', async () => {
    const { userId } = await setup();
    const keys = await t.gw.services.db.prisma.apiKey.findMany({ where: { userId } });
    expect(keys.map((k) => k.kind)).toEqual(['standard']);
  });

  it('the access token and the api_key share one usage and quota (the grant key, with the app)', async () => {
    const { user, app } = await setup();
    const { tokens, apiKey } = await connect(app, user);
    const viaToken = await t.chat(tokens.access_token);
    const viaKey = await t.chat(apiKey!);
    expect([viaToken.status, viaKey.status]).toEqual([200, 200]);
    await t.gw.services.ledger.flush();
    const records = await t.gw.services.db.prisma.usageRecord.findMany({ where: { requestId: { in: [viaToken, viaKey].map((r) => r.headers.get('x-request-id')!) } } });
    const grantKey = await t.gw.services.keys.authenticate(apiKey!);
    expect(records).toHaveLength(2);
    for (const r of records) expect(r).toMatchObject({ apiKeyId: grantKey!.keyId, oauthAppId: app.id });
    const usage: any = await (await t.gw.fetch('/v1/usage', { key: tokens.access_token })).json();
    expect(usage.totals.requests).toBe(2);
  });
});

describe('the api_key dies with the grant', () => {
  const dead = async (apiKey: string, accessToken: string) => {
    t.gw.services.keys.invalidateAll();
    expect((await t.chat(apiKey)).status).toBe(401);
    expect((await t.chat(accessToken)).status).toBe(401);
  };

  it('when the app revokes its token at /v1/oauth/revoke', async () => {
    const { user, app } = await setup();
    const { tokens, apiKey } = await connect(app, user);
    expect((await t.chat(apiKey!)).status).toBe(200);
    expect((await t.post('/v1/oauth/revoke', { token: tokens.refresh_token! })).status).toBe(200);
    // No cache flush here: revocation clears this instance's caches itself.
    expect((await t.chat(apiKey!)).status).toBe(401);
    await dead(apiKey!, tokens.access_token);
  });

  it('when the user removes the connected app in the dashboard (the API with the session)', async () => {
    const { user, app } = await setup();
    const { tokens, apiKey } = await connect(app, user);
    const [grant] = await user.connectedApps();
    expect((await user.api('DELETE', `/v1/connected-apps/${grant!.id}`)).status).toBe(204);
    await dead(apiKey!, tokens.access_token);
  });

  it('when the user removes the connected app through the API', async () => {
    const { user, ownKey, app } = await setup();
    const { tokens, apiKey } = await connect(app, user);
    const [grant] = await connectedApps(ownKey);
    expect((await t.gw.fetch(`/v1/connected-apps/${grant.id}`, { method: 'DELETE', key: ownKey })).status).toBe(204);
    await dead(apiKey!, tokens.access_token);
  });

  it('when an old refresh token comes back (reuse detection)', async () => {
    const { user, app } = await setup();
    const { tokens, apiKey } = await connect(app, user);
    const second = await t.refresh(app, tokens.refresh_token!);
    await expect(t.refresh(app, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    await dead(apiKey!, second.access_token);
  });

  it('when a code is replayed', async () => {
    const { user, app } = await setup();
    const a = await t.authorize(app, user);
    const tokens = await t.exchange(app, a.params, a.verifier);
    const apiKey = ((await (await t.me(tokens.access_token)).json()) as any).api_key;
    await expect(t.exchange(app, a.params, a.verifier)).rejects.toMatchObject({ error: 'invalid_grant' });
    await dead(apiKey, tokens.access_token);
  });

  it('when the app is deleted', async () => {
    const { user, app } = await setup();
    const { tokens, apiKey } = await connect(app, user);
    expect((await t.gw.fetch(`/v1/apps/${app.id}`, { method: 'DELETE', key: app.ownerKey })).status).toBe(204);
    await dead(apiKey!, tokens.access_token);
  });
});

it('credentials issued to an app are for inference only: 403 on app and connected-app management', async () => {
  const { user, ownKey, app } = await setup();
  const { tokens, apiKey } = await connect(app, user);
  const [grant] = await connectedApps(ownKey);
  const routes: [string, string, unknown?][] = [
    ['GET', '/v1/apps'],
    ['POST', '/v1/apps', { name: 'x', redirect_uris: ['https://x.example/cb'] }],
    ['POST', `/v1/apps/${app.id}/rotate-secret`],
    ['DELETE', `/v1/apps/${app.id}`],
    ['GET', '/v1/connected-apps'],
    ['DELETE', `/v1/connected-apps/${grant.id}`],
  ];
  for (const credential of [apiKey!, tokens.access_token]) {
    for (const [method, path, json] of routes) {
      const res = await t.gw.fetch(path, { method, key: credential, json });
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(await errorBody(res)).toMatchObject({ type: 'permission_error', code: 'app_credential_not_allowed' });
    }
  }
  // Nothing was changed, and inference still works.
  expect(await connectedApps(ownKey)).toHaveLength(1);
  expect((await t.chat(apiKey!)).status).toBe(200);
});

it('Connected apps show the key’s prefix, created and last-used times, never the key', async () => {
  const { user, ownKey, app } = await setup();
  const { apiKey } = await connect(app, user);
  expect((await t.chat(apiKey!)).status).toBe(200);
  await t.gw.services.keys.flushLastUsed();
  const [grant] = await connectedApps(ownKey);
  expect(grant.api_key).toMatchObject({ prefix: apiKey!.slice(0, 9), created_at: expect.any(String), last_used_at: expect.any(String) });
  expect(JSON.stringify(grant)).not.toContain(apiKey);
  // What the dashboard's connected-apps page shows: the prefix, never the key.
  const seen = JSON.stringify(await user.connectedApps());
  expect(seen).toContain(apiKey!.slice(0, 9));
  expect(seen).not.toContain(apiKey);
});

it('403 insufficient_scope carries WWW-Authenticate: Bearer error="insufficient_scope", scope="inference"', async () => {
  const { user, app } = await setup();
  const { tokens } = await connect(app, user, 'identity');
  const res = await t.chat(tokens.access_token);
  expect(res.status).toBe(403);
  expect(res.headers.get('www-authenticate')).toBe('Bearer error="insufficient_scope", scope="inference"');
});

describe("a token's scopes are those granted when it was issued", () => {
  it('a later consent with more scopes does not widen earlier tokens; refresh keeps the scopes', async () => {
    const { user, app } = await setup();
    const narrow = await connect(app, user, 'identity');
    const wide = await connect(app, user, 'identity email inference');
    expect(wide.apiKey).toMatch(/^mg-/);
    const info: any = await (await t.me(narrow.tokens.access_token)).json();
    expect(info.scope).toBe('identity');
    expect(info).not.toHaveProperty('api_key');
    expect(info).not.toHaveProperty('email');
    expect((await t.chat(narrow.tokens.access_token)).status).toBe(403);
    const refreshed = await t.refresh(app, narrow.tokens.refresh_token!);
    expect(refreshed.scope).toBe('identity');
    expect((await t.chat(refreshed.access_token)).status).toBe(403);
  });

  it('the grant shown in Connected apps holds the union of what was consented', async () => {
    const { user, ownKey, app } = await setup();
    await connect(app, user, 'inference');
    await connect(app, user, 'identity');
    const [grant] = await connectedApps(ownKey);
    expect([...grant.scopes].sort()).toEqual(['identity', 'inference']);
  });
});
