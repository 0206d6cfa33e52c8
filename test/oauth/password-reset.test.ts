// Passwords for users who did not sign up with one: the admin API sets one or makes a single-use
// reset link, and /forgot-password mails a link through a real SMTP exchange (smtp-server as the
// mail server). Everything over HTTP against a started gateway, pages with a cookie-keeping client.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser } from '../helpers/browser.ts';
import { errorBody, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { fakeSmtp } from '../helpers/smtp.ts';

const NEW_PASSWORD = 'violet staple orbit 42';
const LINK_NOT_VALID = 'This password-reset link does not work: it expired, was used already, or a newer link or password replaced it.';
const errorText = async (res: Response) => /<p class="error">([^<]*)<\/p>/.exec(await res.text())?.[1]?.replace(/&#39;/g, "'");

const until = async (check: () => boolean, ms = 10_000) => {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe('with an SMTP server configured', () => {
  let gw: TestGateway;
  let smtp: Awaited<ReturnType<typeof fakeSmtp>>;
  let admin: string;
  const logs: string[] = [];
  const api = (method: string, path: string, json?: unknown, headers: Record<string, string> = {}) =>
    gw.fetch(path, { method, key: admin, headers, ...(json === undefined ? {} : { json }) });
  const createUser = async (email: string) => expect((await api('POST', '/admin/v1/users', { email })).status).toBe(201);

  beforeAll(async () => {
    smtp = await fakeSmtp('smtp-pa55word');
    gw = await startTestGateway({
      config: `
providers: []
models: []
auth:
  local:
    allow_signup: true
    throttle: { failures_per_address: 1000, signups_per_address: 1000, resets_per_address: 1000 }
smtp: { host: 127.0.0.1, port: ${smtp.port}, secure: false, user: mailer, password: "\${SMTP_TEST_PASSWORD}", from: "Model Gateway <gateway@example.com>" }
`,
      env: { SMTP_TEST_PASSWORD: 'smtp-pa55word' },
      logger: pino({ level: 'info' }, { write: (line: string) => void logs.push(line) }),
    });
    admin = gw.services.adminTokens.known!;
  });
  afterAll(async () => {
    await gw?.close();
    await smtp?.close();
  });

  it('a user the operator created gets a link on the gateway’s own address (never the Host header), chooses a password and signs in; the link works once', async () => {
    await createUser('ada@example.com');
    const res = await api('POST', '/admin/v1/users/ada@example.com/password-reset', {}, { host: 'evil.example' });
    expect(res.status).toBe(201);
    const link = (await res.json()) as { user_id: string; email: string; url: string; expires_at: string };
    expect(link.email).toBe('ada@example.com');
    expect(link.url).toMatch(new RegExp(`^${gw.url.replace(/[.[\]]/g, '\\$&')}/reset-password\\?token=[0-9A-Za-z]{43}$`));
    // A day by default.
    expect(Math.abs(Date.parse(link.expires_at) - Date.now() - 24 * 3_600_000)).toBeLessThan(60_000);

    const b = new Browser(gw.url);
    const page = await b.get(link.url);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('value="ada@example.com" readonly');
    const form = Browser.fields(html);
    expect(Object.keys(form).sort()).toEqual(['csrf', 'token']);

    // A refused password leaves the link working.
    const weak = await b.post('/reset-password', { ...form, password: 'zzzzzzzzzzzz', confirm: 'zzzzzzzzzzzz' });
    expect(weak.status).toBe(400);
    expect(await errorText(weak)).toBe('Choose a stronger password: not one character repeated.');
    const differ = await b.post('/reset-password', { ...form, password: NEW_PASSWORD, confirm: `${NEW_PASSWORD}!` });
    expect(differ.status).toBe(400);
    expect(await errorText(differ)).toBe('The two passwords differ: type the same one twice.');

    const done = await b.post('/reset-password', { ...form, password: NEW_PASSWORD, confirm: NEW_PASSWORD });
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe('/dashboard');
    expect(((await (await b.get('/v1/session')).json()) as { user: { email: string } }).user.email).toBe('ada@example.com');

    // Once only, by page and by form.
    const again = await new Browser(gw.url).get(link.url);
    expect(again.status).toBe(400);
    expect(await errorText(again)).toBe(LINK_NOT_VALID);
    const other = new Browser(gw.url);
    const { csrf } = Browser.fields(await (await other.get('/signin')).text());
    const replay = await other.post('/reset-password', { csrf: csrf!, token: form.token!, password: 'another fine password', confirm: 'another fine password' });
    expect(replay.status).toBe(400);
    expect(await errorText(replay)).toBe(LINK_NOT_VALID);

    expect((await new Browser(gw.url).signIn('ada@example.com', NEW_PASSWORD)).status).toBe(303);
    expect((await new Browser(gw.url).signIn('ada@example.com', 'another fine password')).status).toBe(401);
  });

  it('a reset ends every other session of the user; the browser that reset is signed in', async () => {
    const elsewhere = new Browser(gw.url);
    await elsewhere.signUp('ben@example.com');
    expect((await elsewhere.get('/v1/session')).status).toBe(200);
    const { url } = (await (await api('POST', '/admin/v1/users/ben@example.com/password-reset', { expires_in_minutes: 30 })).json()) as { url: string };
    const b = new Browser(gw.url);
    const form = Browser.fields(await (await b.get(url)).text());
    expect((await b.post('/reset-password', { ...form, password: NEW_PASSWORD, confirm: NEW_PASSWORD })).status).toBe(303);
    expect((await elsewhere.get('/v1/session')).status).toBe(401);
    expect((await b.get('/v1/session')).status).toBe(200);
  });

  it('a newer link voids the older one, and a link stops working when it expires', async () => {
    await createUser('cy@example.com');
    const make = async (minutes: number) => ((await (await api('POST', '/admin/v1/users/cy@example.com/password-reset', { expires_in_minutes: minutes })).json()) as { url: string }).url;
    const older = await make(60);
    const newer = await make(5);
    expect((await new Browser(gw.url).get(older)).status).toBe(400);
    expect((await new Browser(gw.url).get(newer)).status).toBe(200);
    // A token given twice, or not at all, is no link (and no server error).
    const token = new URL(newer).searchParams.get('token')!;
    for (const query of [`?token=${token}&token=${token}`, '', '?token=']) {
      const res = await new Browser(gw.url).get(`/reset-password${query}`);
      expect(res.status, query).toBe(400);
      expect(await errorText(res)).toBe(LINK_NOT_VALID);
    }
    const clock = gw.services.clock;
    const real = clock.now;
    clock.now = () => real() + 5 * 60_000 + 1_000;
    try {
      const expired = await new Browser(gw.url).get(newer);
      expect(expired.status).toBe(400);
      expect(await errorText(expired)).toBe(LINK_NOT_VALID);
    } finally {
      clock.now = real;
    }
  });

  it('the admin API: set-password with the sign-up rules, refusals in the part-7 body, the password and links never logged', async () => {
    await createUser('dee@example.com');
    const signedIn = new Browser(gw.url);
    const weak = await api('POST', '/admin/v1/users/dee@example.com/password', { password: 'short' });
    expect(weak.status).toBe(400);
    expect(await errorBody(weak)).toEqual({ message: 'Choose a longer password: at least 10 characters.', type: 'invalid_request_error', code: 'weak_password', param: 'password' });
    const named = await api('POST', '/admin/v1/users/dee@example.com/password', { password: 'xdee@example.com1' });
    expect((await errorBody(named)).message).toBe('Choose a stronger password: it must not contain your email address.');

    const set = await api('POST', '/admin/v1/users/dee@example.com/password', { password: NEW_PASSWORD });
    expect(set.status).toBe(200);
    expect(await set.json()).toMatchObject({ user: { email: 'dee@example.com' }, sessions_ended: 0 });
    expect((await signedIn.signIn('dee@example.com', NEW_PASSWORD)).status).toBe(303);
    // Set again: the session that used the old password ends.
    const reset = await api('POST', '/admin/v1/users/dee@example.com/password', { password: 'a second good password' });
    expect(((await reset.json()) as { sessions_ended: number }).sessions_ended).toBe(1);
    expect((await signedIn.get('/v1/session')).status).toBe(401);

    const unknown = await api('POST', '/admin/v1/users/nobody@example.com/password', { password: NEW_PASSWORD });
    expect(unknown.status).toBe(404);
    expect(await errorBody(unknown)).toMatchObject({ code: 'user_not_found', type: 'invalid_request_error' });
    const tooLong = await api('POST', '/admin/v1/users/dee@example.com/password-reset', { expires_in_minutes: 20_000 });
    expect(tooLong.status).toBe(400);
    expect(await errorBody(tooLong)).toMatchObject({ code: 'invalid_parameter', param: 'expires_in_minutes' });

    await api('PATCH', '/admin/v1/users/dee@example.com', { disabled: true });
    const disabled = await api('POST', '/admin/v1/users/dee@example.com/password-reset', {});
    expect(disabled.status).toBe(409);
    expect(await errorBody(disabled)).toEqual({
      message: "User 'dee@example.com' is disabled, so a new password would not let them in: enable the user first (users enable).",
      type: 'invalid_request_error',
      code: 'user_disabled',
      param: 'user',
    });

    const link = ((await (await api('POST', '/admin/v1/users/cy@example.com/password-reset', {})).json()) as { url: string }).url;
    const token = new URL(link).searchParams.get('token')!;
    await new Browser(gw.url).get(link);
    const all = logs.join('\n');
    expect(all).toContain('"action":"user.set_password"');
    expect(all).toContain('"action":"user.reset_link"');
    for (const secret of [NEW_PASSWORD, 'a second good password', token]) expect(all).not.toContain(secret);
  });

  it('forgot password: the same answer for known and unknown emails, and a mail with a working link only to a known one', async () => {
    await createUser('eve@example.com');
    const b = new Browser(gw.url);
    expect(await (await b.get('/signin')).text()).toContain('<a href="/forgot-password">Forgot your password?</a>');
    const ask = async (email: string) => {
      const res = await b.submit('/forgot-password', '/forgot-password', { email });
      return { status: res.status, text: (await res.text()).replaceAll(email.trim().toLowerCase(), 'EMAIL') };
    };
    const before = smtp.mails.length;
    const unknown = await ask('nobody-here@example.com');
    const known = await ask('Eve@Example.com ');
    expect(unknown.status).toBe(200);
    expect(known).toEqual(unknown);
    expect(unknown.text).toContain('If an account uses EMAIL, a link to choose a new password is on its way to it. The link works once, for 60 minutes.');

    await until(() => smtp.mails.length > before);
    await new Promise((r) => setTimeout(r, 300));
    expect(smtp.mails.length).toBe(before + 1);
    const mail = smtp.mails.at(-1)!;
    expect(mail.to).toEqual(['eve@example.com']);
    expect(mail.from).toBe('gateway@example.com');
    expect(mail.subject).toBe('Reset your Model Gateway password');
    const url = /(http\S+\/reset-password\?token=\S+)/.exec(mail.text)![1]!;
    expect(url.startsWith(`${gw.url}/reset-password?token=`)).toBe(true);
    expect(mail.text).toContain('Open this link within 60 minutes to choose a new password. It works once:');

    const r = new Browser(gw.url);
    const form = Browser.fields(await (await r.get(url)).text());
    expect((await r.post('/reset-password', { ...form, password: NEW_PASSWORD, confirm: NEW_PASSWORD })).status).toBe(303);
    expect((await new Browser(gw.url).signIn('eve@example.com', NEW_PASSWORD)).status).toBe(303);
  });

  it('forgot password is throttled per email, known or not: the fourth request in the window is 429 with Retry-After', async () => {
    for (const email of ['fay@example.com', 'no-such-fay@example.com']) {
      const b = new Browser(gw.url);
      const statuses = [];
      let last: Response | null = null;
      for (let i = 0; i < 4; i++) {
        last = await b.submit('/forgot-password', '/forgot-password', { email });
        statuses.push(last.status);
      }
      expect(statuses).toEqual([200, 200, 200, 429]);
      expect(Number(last!.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await errorText(last!)).toMatch(/^Too many reset links asked for\. Try again in 1[45] minutes \(after \d\d:\d\d UTC\)\.$/);
    }
  });
});

describe('without an SMTP server', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({ config: 'providers: []\nmodels: []\npublic_url: https://gateway.example/\n' });
  });
  afterAll(() => gw?.close());

  it('the forgot-password page says to ask the operator, and sends nothing', async () => {
    for (const res of [await new Browser(gw.url).get('/forgot-password'), await new Browser(gw.url).submit('/signin', '/forgot-password', { email: 'a@example.com' })]) {
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(text).toContain('This gateway does not send mail. Ask its operator for a reset link: they make one with\n<code>model-gateway users reset-link &lt;your email&gt;</code>.');
      expect(text).not.toContain('<form');
    }
  });

  it('links are on public_url', async () => {
    const admin = gw.services.adminTokens.known!;
    await gw.fetch('/admin/v1/users', { method: 'POST', key: admin, json: { email: 'gil@example.com' } });
    const res = await gw.fetch('/admin/v1/users/gil@example.com/password-reset', { method: 'POST', key: admin, json: {} });
    expect(((await res.json()) as { url: string }).url).toMatch(/^https:\/\/gateway\.example\/reset-password\?token=[0-9A-Za-z]{43}$/);
  });
});

describe('with password sign-in off', () => {
  it('set-password and reset links are refused: 409 password_signin_disabled', async () => {
    const gw = await startTestGateway({ config: 'providers: []\nmodels: []\nauth: { local: { enabled: false } }\n' });
    try {
      const admin = gw.services.adminTokens.known!;
      await gw.fetch('/admin/v1/users', { method: 'POST', key: admin, json: { email: 'hal@example.com' } });
      for (const [path, json] of [['password', { password: NEW_PASSWORD }], ['password-reset', {}]] as const) {
        const res = await gw.fetch(`/admin/v1/users/hal@example.com/${path}`, { method: 'POST', key: admin, json });
        expect(res.status).toBe(409);
        expect(await errorBody(res)).toEqual({
          message: 'Password sign-in is off on this gateway (auth.local.enabled: false): a password could not be used. Turn it on in the config first.',
          type: 'invalid_request_error',
          code: 'password_signin_disabled',
          param: null,
        });
      }
    } finally {
      await gw.close();
    }
  });
});
