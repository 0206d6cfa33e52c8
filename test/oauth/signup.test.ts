// Who may create an account (decision 0033), over HTTP against started gateways: closed by
// default, the first account is the administrator (from this machine freely, from elsewhere with the
// admin token), later sign-ups are refused unless allow_signup or an allowed email domain (proven by
// a mailed link) opens them, operators invite users (an account and a set-password link), and
// sign-in providers create accounts under the same rules.
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Browser } from '../helpers/browser.ts';
import { minimalConfig, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { fakeSmtp } from '../helpers/smtp.ts';

const PASSWORD = 'correct horse battery';
const NEW_PASSWORD = 'violet staple orbit 42';
/** A client elsewhere, as a proxy on this machine trusted for it (TRUST_PROXY=loopback) names it. */
const ELSEWHERE = { 'x-forwarded-for': '203.0.113.7' };

const errorText = async (res: Response) => /<p class="error">([^<]*)<\/p>/.exec(await res.text())?.[1]?.replace(/&#39;/g, "'");
const signUp = (b: Browser, email: string, extra: Record<string, string> = {}) => b.submit('/signup', '/signup', { email, password: PASSWORD, name: email.split('@')[0]!, ...extra });
const sessionOf = async (b: Browser) => ((await (await b.get('/v1/session')).json()) as { user: { email: string; role: string; plan: string } }).user;
/** A form's CSRF token when /signup shows no form (it is closed): the sign-in page's. */
const csrfOf = async (b: Browser) => Browser.fields(await (await b.get('/signin')).text()).csrf!;
const users = (gw: TestGateway) => gw.services.accounts.listUsers();
const withAuth = (local: string, rest = '') => `${minimalConfig}auth:\n  local: ${local}\n${rest}`;

let gw: TestGateway | undefined;
const logs: string[] = [];
const start = (config = minimalConfig, env: NodeJS.ProcessEnv = {}) =>
  startTestGateway({ config, env, logger: pino({ level: 'info' }, { write: (line: string) => void logs.push(line) }) });
afterEach(async () => {
  await gw?.close();
  gw = undefined;
  logs.length = 0;
});

describe('with the defaults: sign-up closed, the first account is the administrator', () => {
  it('start-up says sign-up is closed and how the first account is made; the sign-in page offers it', async () => {
    gw = await start();
    const said = logs.map((l) => JSON.parse(l) as { level: number; msg: string });
    expect(said).toContainEqual(expect.objectContaining({ level: 30, msg: 'sign-up: closed; operators invite users (model-gateway users create, then users reset-link)' }));
    expect(said).toContainEqual(expect.objectContaining({ level: 30, msg: expect.stringContaining(`no account yet: the first account created at ${gw.url}/signup becomes the administrator.`) }));
    // No warning: the defaults open nothing.
    expect(said.filter((l) => l.level >= 40)).toEqual([]);
    const page = await (await new Browser(gw.url).get('/signin')).text();
    expect(page).toContain('This gateway has no account yet. <a href="/signup?next=%2Fdashboard">Create the first one</a>: it becomes the administrator.');
  });

  it('the first sign-up from this machine needs no token and is the administrator; a second is refused with a page saying how to be invited (403), creating nothing', async () => {
    gw = await start();
    const first = new Browser(gw.url);
    const form = await (await first.get('/signup')).text();
    expect(form).toContain('<h1>Create the administrator account</h1>');
    expect(form).not.toContain('admin_token');
    const res = await signUp(first, 'owner@example.com');
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/dashboard');
    expect(await sessionOf(first)).toMatchObject({ email: 'owner@example.com', role: 'admin' });
    expect(logs.some((l) => l.includes('"action":"user.first_admin"'))).toBe(true);

    const second = new Browser(gw.url);
    const closed = await second.get('/signup');
    expect(closed.status).toBe(403);
    const text = await closed.text();
    expect(text).toContain('<h1>Sign-up is closed</h1>');
    expect(text).toContain('Ask its operator to invite you');
    expect(text).toContain('model-gateway users reset-link');
    expect(text).not.toContain('<form method="post" action="/signup">');
    const posted = await second.post('/signup', { csrf: await csrfOf(second), email: 'stranger@example.com', password: PASSWORD });
    expect(posted.status).toBe(403);
    expect(await posted.text()).toContain('<h1>Sign-up is closed</h1>');
    expect((await users(gw)).map((u) => u.email)).toEqual(['owner@example.com']);
    // The sign-in page no longer offers an account.
    const signin = await (await second.get('/signin')).text();
    expect(signin).not.toContain('/signup');
  });

  it('inviting: an operator creates the account and a set-password link; the new user chooses a password there, is signed in, and signs in again', async () => {
    gw = await start();
    await gw.services.accounts.createUser({ email: 'owner@example.com' });
    const admin = (method: string, path: string, json?: unknown) => gw!.fetch(path, { method, key: gw!.services.adminTokens.known!, ...(json === undefined ? {} : { json }) });
    expect((await admin('POST', '/admin/v1/users', { email: 'Invitee@Example.com', name: 'Ivy' })).status).toBe(201);
    const made = await admin('POST', '/admin/v1/users/invitee@example.com/password-reset', { expires_in_minutes: 60 * 24 * 3 });
    expect(made.status).toBe(201);
    const { url } = (await made.json()) as { url: string };
    expect(url.startsWith(`${gw.url}/reset-password?token=`)).toBe(true);

    const b = new Browser(gw.url);
    const page = await b.get(url);
    expect(page.status).toBe(200);
    const html = await page.text();
    // A new account: chosen, not reset.
    expect(html).toContain('<h1>Choose your password</h1>');
    expect(html).toContain('Welcome: this account is new.');
    expect(html).toContain('value="invitee@example.com" readonly');
    const done = await b.post('/reset-password', { ...Browser.fields(html), password: NEW_PASSWORD, confirm: NEW_PASSWORD });
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe('/dashboard');
    expect(await sessionOf(b)).toMatchObject({ email: 'invitee@example.com', role: 'user', plan: 'free' });
    expect((await new Browser(gw.url).signIn('invitee@example.com', NEW_PASSWORD)).status).toBe(303);
    // Sign-up stayed closed all along.
    expect((await new Browser(gw.url).get('/signup')).status).toBe(403);
  });
});

describe('the first account from another machine needs the admin token', () => {
  it('through a trusted proxy: the form asks for the token and says where it is; without it or with a wrong one 401 and nothing made; with it, the administrator', async () => {
    gw = await start(minimalConfig, { TRUST_PROXY: 'loopback' });
    const remote = new Browser(gw.url, ELSEWHERE);
    const form = await (await remote.get('/signup')).text();
    expect(form).toContain('<label for="admin_token">Admin token</label>');
    expect(form).toContain('<code>admin-token</code>');
    expect(form).toContain('<code>GATEWAY_ADMIN_TOKEN</code>');
    expect(form).toContain('<code>docker exec &lt;container&gt; cat /data/admin-token</code>');

    const none = await signUp(remote, 'racer@example.com');
    expect(none.status).toBe(401);
    expect(await errorText(none)).toBe('Enter the gateway’s admin token: the first account is its administrator.');
    const wrong = await signUp(remote, 'racer@example.com', { admin_token: 'mga-guess' });
    expect(wrong.status).toBe(401);
    expect(await errorText(wrong)).toBe('That is not this gateway’s admin token.');
    expect(await users(gw)).toEqual([]);
    expect(logs.some((l) => l.includes('first-account sign-up refused: no valid admin token') && l.includes('203.0.113.7'))).toBe(true);

    const right = await signUp(remote, 'owner@example.com', { admin_token: gw.services.adminTokens.known! });
    expect(right.status).toBe(303);
    expect(await sessionOf(remote)).toMatchObject({ email: 'owner@example.com', role: 'admin' });
  });

  it('a request relayed by a proxy on this machine whose forwarded headers are not trusted is not this machine’s', async () => {
    gw = await start();
    expect(await (await new Browser(gw.url, ELSEWHERE).get('/signup')).text()).toContain('id="admin_token"');
    expect(await (await new Browser(gw.url, { forwarded: 'for=203.0.113.7' }).get('/signup')).text()).toContain('id="admin_token"');
    expect(await (await new Browser(gw.url).get('/signup')).text()).not.toContain('id="admin_token"');
    expect((await signUp(new Browser(gw.url, ELSEWHERE), 'racer@example.com')).status).toBe(401);
  });

  it('a forged X-Forwarded-For naming loopback is not this machine, even with every proxy trusted; nor is a page naming another host (DNS rebinding)', async () => {
    gw = await start(minimalConfig, { TRUST_PROXY: 'true' });
    const forged: Record<string, string>[] = [{ 'x-forwarded-for': '::1' }, { 'x-forwarded-for': '127.0.0.1' }, { 'x-real-ip': '127.0.0.1' }];
    for (const headers of forged) {
      expect(await (await new Browser(gw.url, headers).get('/signup')).text(), JSON.stringify(headers)).toContain('id="admin_token"');
      expect((await signUp(new Browser(gw.url, headers), 'racer@example.com')).status, JSON.stringify(headers)).toBe(401);
    }
    expect(await users(gw)).toEqual([]);
    // fetch sends its own Host: the form is read over node:http, with the Host a rebinding page's request carries.
    const { port } = new URL(gw.url);
    const formFor = (host: string) =>
      new Promise<string>((resolve, reject) => {
        const req = httpRequest({ host: '127.0.0.1', port, path: '/signup', headers: { host } }, (res) => {
          let text = '';
          res.on('data', (d) => (text += d));
          res.on('end', () => resolve(text));
        });
        req.on('error', reject);
        req.end();
      });
    for (const host of ['attacker.example', 'attacker.example:8080', `gateway.internal:${port}`]) expect(await formFor(host), host).toContain('id="admin_token"');
    for (const host of ['localhost', `localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`]) expect(await formFor(host), host).not.toContain('id="admin_token"');
  });
});

describe('allow_signup: true', () => {
  it('the first account still needs this machine or the token; later ones sign up from anywhere as users', async () => {
    gw = await start(withAuth('{ allow_signup: true }'), { TRUST_PROXY: 'loopback' });
    expect((await signUp(new Browser(gw.url, ELSEWHERE), 'racer@example.com')).status).toBe(401);
    const owner = new Browser(gw.url);
    expect((await signUp(owner, 'owner@example.com')).status).toBe(303);
    expect((await sessionOf(owner)).role).toBe('admin');
    const later = new Browser(gw.url, ELSEWHERE);
    const form = await (await later.get('/signup')).text();
    expect(form).toContain('<h1>Create an account</h1>');
    expect(form).not.toContain('admin_token');
    expect((await signUp(later, 'later@example.com')).status).toBe(303);
    expect(await sessionOf(later)).toMatchObject({ email: 'later@example.com', role: 'user' });
    expect(await (await later.get('/signin')).text()).toContain('No account? <a href="/signup?next=%2Fdashboard">Create one</a>.');
  });
});

describe('signup_email_domains', () => {
  let smtp: Awaited<ReturnType<typeof fakeSmtp>>;
  beforeAll(async () => {
    smtp = await fakeSmtp('smtp-pa55word');
  });
  afterAll(() => smtp?.close());
  const withDomains = (mail: boolean) =>
    withAuth(
      '{ signup_email_domains: [Example.org], throttle: { resets_per_address: 1000 } }',
      mail ? `smtp: { host: 127.0.0.1, port: ${smtp.port}, secure: false, user: mailer, password: smtp-pa55word, from: "Model Gateway <gateway@example.com>" }\n` : '',
    );
  const mailTo = async (to: string, n: number) => {
    for (let i = 0; i < 500 && smtp.mails.filter((m) => m.to.includes(to)).length < n; i++) await new Promise((r) => setTimeout(r, 20));
    return smtp.mails.filter((m) => m.to.includes(to))[n - 1]!;
  };

  it('an address of an allowed domain gets a mailed link to choose its password (its address proven), any other is refused (403)', async () => {
    gw = await start(withDomains(true));
    await gw.services.accounts.createUser({ email: 'owner@example.com' });
    const b = new Browser(gw.url);
    const form = await (await b.get('/signup')).text();
    expect(form).toContain('Addresses at example.org can create an account here');
    expect(form).not.toContain('id="password"');

    const other = await b.submit('/signup', '/signup', { email: 'eve@example.net', name: 'Eve' });
    expect(other.status).toBe(403);
    expect(await errorText(other)).toBe("Only addresses at example.org can create an account here. For another one, ask the gateway's operator to invite you.");
    // A lookalike is another domain.
    expect((await b.submit('/signup', '/signup', { email: 'eve@example.org.evil.test' })).status).toBe(403);

    const asked = await b.submit('/signup', '/signup', { email: 'Ana@Example.org', name: 'Ana' });
    expect(asked.status).toBe(200);
    expect(await asked.text()).toContain('A link to choose your password is on its way to ana@example.org.');
    const mail = await mailTo('ana@example.org', 1);
    expect(mail.subject).toBe('Finish creating your Model Gateway account');
    const link = /(http:\/\/\S+\/reset-password\?token=[0-9A-Za-z]{43})/.exec(mail.text)![1]!;
    // Not usable before the link is followed: no password.
    expect((await new Browser(gw.url).signIn('ana@example.org', PASSWORD)).status).toBe(401);
    const page = await (await b.get(link)).text();
    expect(page).toContain('<h1>Choose your password</h1>');
    expect((await b.post('/reset-password', { ...Browser.fields(page), password: NEW_PASSWORD, confirm: NEW_PASSWORD })).status).toBe(303);
    expect(await sessionOf(b)).toMatchObject({ email: 'ana@example.org', role: 'user', plan: 'free' });
    expect((await users(gw)).map((u) => u.email)).toEqual(['owner@example.com', 'ana@example.org']);

    // Asked again: the same answer, and the mail says the account exists.
    expect((await new Browser(gw.url).submit('/signup', '/signup', { email: 'ana@example.org' })).status).toBe(200);
    expect((await mailTo('ana@example.org', 2)).subject).toBe('Your Model Gateway account');
    expect(await users(gw)).toHaveLength(2);
  });

  it('without smtp the form cannot prove an address: sign-up stays closed, and loading the config says why', async () => {
    gw = await start(withDomains(false));
    await gw.services.accounts.createUser({ email: 'owner@example.com' });
    expect((await new Browser(gw.url).get('/signup')).status).toBe(403);
    expect(gw.services.config.loadWarnings).toEqual([expect.stringMatching(/^auth\.local\.signup_email_domains is set but smtp is not: the sign-up form confirms an address by mailing it a link/)]);
  });
});

describe('sign-in providers create accounts under the same rules', () => {
  /** A plain OAuth 2.0 provider that signs in whoever `profile` says, at once. */
  let idp: Server;
  let idpUrl = '';
  let profile: Record<string, unknown> = {};
  beforeAll(async () => {
    idp = createServer((req, res) => {
      const url = new URL(req.url!, idpUrl);
      if (url.pathname === '/authorize') {
        const back = new URL(url.searchParams.get('redirect_uri')!);
        back.searchParams.set('code', 'code-1');
        back.searchParams.set('state', url.searchParams.get('state')!);
        res.writeHead(302, { location: back.href }).end();
      } else if (url.pathname === '/token') {
        req.resume();
        req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: 'at-1', token_type: 'Bearer', expires_in: 60 })));
      } else if (url.pathname === '/userinfo') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(profile));
      } else res.writeHead(404).end();
    });
    await new Promise<void>((r) => idp.listen(0, '127.0.0.1', r));
    idpUrl = `http://127.0.0.1:${(idp.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => idp.close(() => r())));

  const corp = () =>
    `  providers:\n    - { id: corp, type: oauth2, name: Corp, authorization_endpoint: "${idpUrl}/authorize", token_endpoint: "${idpUrl}/token", userinfo_endpoint: "${idpUrl}/userinfo", client_id: gw, client_secret: idp-client-secret }\n`;
  /** Signs in with Corp as `who`: the gateway's answer at its callback. */
  async function withCorp(b: Browser, who: Record<string, unknown>): Promise<Response> {
    profile = who;
    const started = await b.get('/signin/corp');
    expect(started.status).toBe(302);
    const atIdp = await fetch(started.headers.get('location')!, { redirect: 'manual' });
    return b.get(atIdp.headers.get('location')!);
  }

  it('closed: a new identity is refused (403, nothing made) unless its verified email is of an allowed domain; an invited one (an account with its email) signs in', async () => {
    gw = await start(withAuth('{ signup_email_domains: [corp.example] }', corp()));
    await gw.services.accounts.createUser({ email: 'owner@example.com' });

    const stranger = await withCorp(new Browser(gw.url), { sub: 's-1', email: 'someone@gmail.example', email_verified: true, name: 'Someone' });
    expect(stranger.status).toBe(403);
    const text = await stranger.text();
    expect(text).toContain('No account of this gateway belongs to this Corp identity (someone@gmail.example), and sign-up is closed to it.');
    expect(text).toContain('Ask the gateway');
    const unverified = await withCorp(new Browser(gw.url), { sub: 's-2', email: 'mallory@corp.example', email_verified: false });
    expect(unverified.status).toBe(403);
    expect(await unverified.text()).toContain('(Corp must say the address is verified)');
    expect((await users(gw)).map((u) => u.email)).toEqual(['owner@example.com']);

    const colleague = new Browser(gw.url);
    expect((await withCorp(colleague, { sub: 's-3', email: 'Carol@corp.example', email_verified: true, name: 'Carol' })).status).toBe(303);
    expect(await sessionOf(colleague)).toMatchObject({ email: 'carol@corp.example', role: 'user' });

    await gw.services.accounts.createUser({ email: 'guest@gmail.example' });
    const guest = new Browser(gw.url);
    expect((await withCorp(guest, { sub: 's-4', email: 'guest@gmail.example', email_verified: true })).status).toBe(303);
    expect((await sessionOf(guest)).email).toBe('guest@gmail.example');
    expect(await users(gw)).toHaveLength(3);
  });

  it('allow_signup: true lets any identity make an account', async () => {
    gw = await start(withAuth('{ allow_signup: true }', corp()));
    await gw.services.accounts.createUser({ email: 'owner@example.com' });
    const b = new Browser(gw.url);
    expect((await withCorp(b, { sub: 'a-1', email: 'anyone@gmail.example', email_verified: false })).status).toBe(303);
    expect((await sessionOf(b)).role).toBe('user');
  });

  it('the first account: from this machine the administrator; from elsewhere refused, pointing at /signup', async () => {
    gw = await start(withAuth('{}', corp()), { TRUST_PROXY: 'loopback' });
    const remote = await withCorp(new Browser(gw.url, ELSEWHERE), { sub: 'f-1', email: 'racer@corp.example', email_verified: true });
    expect(remote.status).toBe(403);
    expect(await remote.text()).toContain('its first account (the administrator) cannot be made by signing in with Corp from another machine');
    expect(await users(gw)).toEqual([]);
    const here = new Browser(gw.url);
    expect((await withCorp(here, { sub: 'f-2', email: 'owner@corp.example', email_verified: true })).status).toBe(303);
    expect(await sessionOf(here)).toMatchObject({ email: 'owner@corp.example', role: 'admin' });
  });
});
