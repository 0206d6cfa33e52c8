// The sign-in and consent pages in headless Chromium (Debian's, driven by playwright-core): the user
// signs in through a local OpenID Connect provider (oidc-provider), approves, and the app receives
// `code` and `state`; the code becomes tokens; the access token calls chat completions.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync } from 'node:fs';
import * as oauth from 'oauth4webapi';
import Provider from 'oidc-provider';
import { chromium, type Browser as Chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstreams, type FakeUpstreams } from '../helpers/fake-upstreams.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { textConfig } from '../helpers/text-gateway.ts';

let APP_CALLBACK = '';
let appServer: ReturnType<typeof createServer>;
/** Where the app's callback was last called (the app is a tiny local server). */
let lastCallback: URL | null = null;
const insecure = { [oauth.allowInsecureRequests]: true };
let idp: { url: string; close(): Promise<void> };
let fake: FakeUpstreams;
let gw: TestGateway;
let browser: Chromium;
let client: { client_id: string; client_secret: string };

async function startIdp(callback: (issuer: string) => string): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const provider = new Provider(issuer, {
    clients: [{ client_id: 'gateway', client_secret: 'gateway-secret-at-the-idp', redirect_uris: [callback(issuer)], grant_types: ['authorization_code'], response_types: ['code'] }],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'preferred_username'] },
    findAccount: async (_ctx: unknown, id: string) => ({
      accountId: id,
      claims: async () => ({ sub: id, email: `${id}@idp.example`, email_verified: true, name: `User ${id}`, preferred_username: id }),
    }),
    features: { devInteractions: { enabled: true } },
  });
  server.on('request', provider.callback());
  return { url: issuer, close: () => new Promise((r) => server.close(() => r())) };
}

beforeAll(async () => {
  appServer = createServer((req, res) => {
    // Only the callback counts (the browser also asks this origin for /favicon.ico).
    if (req.url?.startsWith('/callback')) lastCallback = new URL(req.url, APP_CALLBACK);
    res.writeHead(200, { 'content-type': 'text/html' }).end('<h1>Acme Notes</h1>');
  });
  await new Promise<void>((r) => appServer.listen(0, '127.0.0.1', r));
  APP_CALLBACK = `http://127.0.0.1:${(appServer.address() as AddressInfo).port}/callback`;
  fake = await startFakeUpstreams();
  // The gateway's callback at the IdP needs the gateway's port: take one, then start on it. Another
  // test's server may take that port in between (ports are reused): then try another.
  for (let attempt = 1; ; attempt++) {
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    idp = await startIdp(() => `http://127.0.0.1:${port}/signin/testidp/callback`);
    try {
      gw = await startTestGateway({
        config: textConfig(fake.url, `auth:\n  local: { allow_signup: true }\n  providers:\n    - { id: testidp, type: oidc, name: Test IdP, issuer: "${idp.url}", client_id: gateway, client_secret: gateway-secret-at-the-idp }\n`),
        env: { PORT: String(port) },
      });
      break;
    } catch (err) {
      await idp.close();
      if (attempt >= 5 || !/already in use/.test((err as Error).message)) throw err;
    }
  }
  const key = await gw.newKey();
  client = (await (await gw.fetch('/v1/apps', { method: 'POST', key, json: { name: 'Acme Notes', description: 'Takes notes with AI.', redirect_uris: [APP_CALLBACK], homepage_url: 'https://acme.example' } })).json()) as any;
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await gw?.close();
  await fake?.close();
  await idp?.close();
  appServer?.close();
});

async function appCallback(_page: Page): Promise<() => URL | null> {
  lastCallback = null;
  return () => lastCallback;
}

const authorizeUrl = async (state: string, verifier: string) =>
  `${gw.url}/v1/oauth/authorize?${new URLSearchParams({
    client_id: client.client_id,
    redirect_uri: APP_CALLBACK,
    response_type: 'code',
    scope: 'identity email inference',
    state,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  })}`;

it('signs in through the identity provider, approves, and the app gets a code it can use', async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  const landed = await appCallback(page);
  const verifier = oauth.generateRandomCodeVerifier();
  await page.goto(await authorizeUrl('state-123', verifier));
  // Not signed in: the gateway's sign-in page offers the identity provider.
  await page.getByRole('link', { name: 'Continue with Test IdP' }).click();
  // The identity provider's own login and consent pages.
  await page.locator('input[name="login"]').fill('carol');
  await page.locator('input[name="password"]').fill('anything');
  await page.locator('button[type="submit"]').click();
  await page.locator('button[type="submit"]').click();
  // Back at the gateway: the consent page names the app and the scopes in plain words.
  await page.waitForURL(/\/v1\/oauth\/authorize/);
  expect(await page.locator('h1').innerText()).toBe('Acme Notes wants to access your account');
  const body = await page.locator('main').innerText();
  expect(body).toContain('Takes notes with AI.');
  expect(body).toContain('Use AI models on your behalf');
  expect(body).toContain('See your email address');
  mkdirSync('test/artifacts', { recursive: true });
  await page.screenshot({ path: 'test/artifacts/consent-page.png', fullPage: true });
  console.log('consent page screenshot: test/artifacts/consent-page.png');
  await page.locator('#approve').click();
  await expect.poll(() => landed()).not.toBeNull();
  const url = landed()!;
  expect(url.searchParams.get('state')).toBe('state-123');
  expect(url.searchParams.get('code')).toMatch(/^mgo_code_/);

  // The app exchanges the code (confidential client, HTTP Basic) and acts for Carol.
  const issuer = new URL(gw.url);
  const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
  const c: oauth.Client = { client_id: client.client_id };
  const params = oauth.validateAuthResponse(as, c, url, 'state-123');
  const tokens = await oauth.processAuthorizationCodeResponse(as, c, await oauth.authorizationCodeGrantRequest(as, c, oauth.ClientSecretBasic(client.client_secret), params, APP_CALLBACK, verifier, insecure));
  const me: any = await (await gw.fetch('/v1/oauth/me', { headers: { authorization: `Bearer ${tokens.access_token}` } })).json();
  expect(me).toMatchObject({ email: 'carol@idp.example', username: 'carol' });
  const chat = await gw.fetch('/v1/chat/completions', { method: 'POST', key: tokens.access_token, json: { model: 'anthropic-text', messages: [{ role: 'user', content: 'hi' }] } });
  expect(chat.status).toBe(200);
  await gw.services.ledger.flush();
  const record = await gw.services.db.prisma.usageRecord.findFirst({ where: { requestId: chat.headers.get('x-request-id')! } });
  expect(record?.userId).toBe(me.sub);
  // Signing in through the provider made no account-wide key: the only one is this app's.
  const keys = await gw.services.db.prisma.apiKey.findMany({ where: { userId: me.sub } });
  expect(keys.map((k) => k.kind)).toEqual(['oauth_grant']);
  // Carol sees the app and its key (the prefix only) where she manages access.
  await page.goto(`${gw.url}/connected`);
  const row = await page.locator('main table').innerText();
  expect(row).toContain('Acme Notes');
  expect(row).toContain(`API key ${me.api_key.slice(0, 9)}…`);
  expect(row).not.toContain(me.api_key);
  await page.screenshot({ path: 'test/artifacts/connected-apps.png', fullPage: true });
  console.log('connected apps screenshot: test/artifacts/connected-apps.png');
  await context.close();
}, 60_000);

/** A local account made on the sign-up page (`next`: where the page was asked to go after). */
async function signUpInPage(page: Page, email: string, next?: string) {
  await page.goto(`${gw.url}/signup${next ? `?next=${next}` : ''}`);
  await page.locator('#email').fill(email);
  await page.locator('#password').fill('a long enough password');
  await page.locator('#signup').click();
}

it('password guessing meets a page that says when to try again', async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  await signUpInPage(page, 'gina@example.com');
  await context.clearCookies();
  let status = 0;
  for (let i = 0; i < 6; i++) {
    await page.goto(`${gw.url}/signin`);
    await page.locator('#email').fill('gina@example.com');
    await page.locator('#password').fill(`wrong guess ${i}`);
    const [resp] = await Promise.all([page.waitForResponse((r) => r.url().endsWith('/signin') && r.request().method() === 'POST'), page.locator('#signin').click()]);
    status = resp.status();
  }
  expect(status).toBe(429);
  expect(await page.locator('p.error').innerText()).toMatch(/^Too many sign-in attempts\. Try again in 15 minutes \(after \d\d:\d\d UTC\)\.$/);
  await page.screenshot({ path: 'test/artifacts/signin-throttled.png', fullPage: true });
  console.log('throttled sign-in screenshot: test/artifacts/signin-throttled.png');
  await context.close();
}, 60_000);

it('a denial sends the user back with access_denied and the state; frames are refused', async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  const landed = await appCallback(page);
  // Sign up locally this time.
  await signUpInPage(page, 'dave@example.com');
  const resp = await page.goto(await authorizeUrl('s-deny', oauth.generateRandomCodeVerifier()));
  expect(resp!.headers()['x-frame-options']).toBe('DENY');
  expect(resp!.headers()['content-security-policy']).toContain("frame-ancestors 'none'");
  await page.locator('#deny').click();
  await expect.poll(() => landed()).not.toBeNull();
  expect(landed()!.searchParams.get('error')).toBe('access_denied');
  expect(landed()!.searchParams.get('state')).toBe('s-deny');
  await context.close();
}, 60_000);

describe('after sign-in Chromium stays on the gateway, whatever `next` says', () => {
  // A tab is dropped by the URL parser: `/\t/host/` becomes the scheme-relative `//host/`.
  const offsite = () => `/%09/${new URL(APP_CALLBACK).host}/evil`;
  const gatewayOrigin = () => new URL(gw.url).origin;

  it('local sign-up', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await signUpInPage(page, 'erin@example.com', offsite());
    await page.waitForLoadState('load');
    expect(new URL(page.url()).origin).toBe(gatewayOrigin());
    expect(new URL(page.url()).pathname).toBe('/dashboard');
    await context.close();
  }, 60_000);

  it('sign-in through the identity provider', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${gw.url}/signin/testidp?next=${offsite()}`);
    await page.locator('input[name="login"]').fill('frank');
    await page.locator('input[name="password"]').fill('anything');
    await page.locator('button[type="submit"]').click();
    await page.locator('button[type="submit"]').click();
    await page.waitForURL((u) => !u.href.startsWith(idp.url));
    await page.waitForLoadState('load');
    expect(new URL(page.url()).origin).toBe(gatewayOrigin());
    expect(new URL(page.url()).pathname).toBe('/dashboard');
    await context.close();
  }, 60_000);
});
