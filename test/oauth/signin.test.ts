// The gateway's sign-in and sign-up pages over HTTP: where they send the browser afterwards,
// throttling of password guesses, and what sign-up accepts and reveals.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Browser } from '../helpers/browser.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

const PASSWORD = 'correct horse battery';

const withGateway = (config?: string) => startTestGateway(config ? { config } : {});

const signIn = (b: Browser, email: string, password: string, next?: string) => b.signIn(email, password, next !== undefined ? { next } : {});
const signUp = (b: Browser, email: string, password: string, next?: string) => b.submit('/signup', '/signup', { email, password, name: 'N', ...(next !== undefined ? { next } : {}) });
const errorText = async (res: Response) => /<p class="error">([^<]*)<\/p>/.exec(await res.text())?.[1];

// The per-address limits are raised here: every request of these tests comes from 127.0.0.1.
const generousAddress = (limits: Record<string, number> = {}) => `
providers: []
models: []
auth:
  local:
    allow_signup: true
    throttle: ${JSON.stringify({ failures_per_address: 1000, signups_per_address: 1000, ...limits })}
`;

describe('on one gateway with the default per-account limit', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await withGateway(generousAddress());
    await new Browser(gw.url).signUp('sam@example.com');
  });
  afterAll(() => gw?.close());

  describe('after sign-in the browser is sent to same-origin paths only', () => {
    const offsite = ['/\t/evil.example/', '/\n/evil.example/', '/\r\nSet-Cookie: x=1', '//evil.example/', '/\\evil.example/', '/\\/evil.example/', 'https://evil.example/', 'javascript:alert(1)', ' /apps'];
    const sameOrigin = (location: string | null) => {
      expect(location).not.toBeNull();
      expect(location).not.toMatch(/[\u0000-\u001f\\]/);
      expect(new URL(location!, gw.url).origin).toBe(new URL(gw.url).origin);
    };

    it.each(offsite)('sign-in with next=%j lands on /dashboard', async (next) => {
      const res = await signIn(new Browser(gw.url), 'sam@example.com', PASSWORD, next);
      expect(res.status).toBe(303);
      sameOrigin(res.headers.get('location'));
      expect(res.headers.get('location')).toBe('/dashboard');
    });

    it.each(offsite)('sign-up with next=%j lands on /dashboard', async (next) => {
      const res = await signUp(new Browser(gw.url), `next${offsite.indexOf(next)}@example.com`, PASSWORD, next);
      expect(res.status).toBe(303);
      expect(res.headers.get('location')).toBe('/dashboard');
    });

    it('the sign-in page never carries an off-site next, whatever the query says', async () => {
      for (const next of offsite) {
        const page = await new Browser(gw.url).get(`/signin?next=${encodeURIComponent(next)}`);
        expect(page.status).toBe(200);
        expect(Browser.fields(await page.text()).next).toBe('/dashboard');
      }
    });

    it('a same-origin path with its query survives', async () => {
      const res = await signIn(new Browser(gw.url), 'sam@example.com', PASSWORD, '/connected?x=1#top');
      expect(res.headers.get('location')).toBe('/connected?x=1#top');
    });
  });

  describe('password sign-in is throttled per account', () => {
    it('after 5 wrong passwords the account answers 429 with Retry-After, even to the right password', async () => {
      await new Browser(gw.url).signUp('victim@example.com');
      const timed = async (password: string) => {
        const started = performance.now();
        const res = await signIn(new Browser(gw.url), 'victim@example.com', password);
        return { status: res.status, ms: performance.now() - started };
      };
      const failures = [];
      for (let i = 0; i < 5; i++) failures.push(await timed(`wrong password ${i}`));
      expect(failures.map((f) => f.status)).toEqual([401, 401, 401, 401, 401]);
      // Refused before the password is hashed: far cheaper than an attempt that hashed.
      const refused = [];
      for (let i = 0; i < 5; i++) refused.push(await timed(`wrong password ${i}`));
      expect(refused.map((f) => f.status)).toEqual([429, 429, 429, 429, 429]);
      const mean = (xs: { ms: number }[]) => xs.reduce((a, x) => a + x.ms, 0) / xs.length;
      expect(mean(refused)).toBeLessThan(mean(failures) / 2);
      const res = await signIn(new Browser(gw.url), ' Victim@Example.com ', PASSWORD);
      expect(res.status).toBe(429);
      const retry = Number(res.headers.get('retry-after'));
      expect(retry).toBeGreaterThan(0);
      expect(retry).toBeLessThanOrEqual(15 * 60);
      expect(await errorText(res)).toMatch(/Too many sign-in attempts\. Try again in \d+ minutes?/);
      // Another account is not affected.
      expect((await signIn(new Browser(gw.url), 'sam@example.com', PASSWORD)).status).toBe(303);
    });

    it('an unknown account is throttled the same way, with the same messages', async () => {
      const known: (string | undefined)[] = [];
      const unknown: (string | undefined)[] = [];
      await new Browser(gw.url).signUp('known@example.com');
      for (let i = 0; i < 6; i++) {
        known.push(await errorText(await signIn(new Browser(gw.url), 'known@example.com', 'not the password')));
        unknown.push(await errorText(await signIn(new Browser(gw.url), 'nobody@example.com', 'not the password')));
      }
      expect(unknown).toEqual(known);
      expect(known[0]).toBe('Wrong email or password.');
      expect(known[5]).toMatch(/^Too many sign-in attempts/);
    });
  });

  describe('sign-up', () => {
    it.each(['not-an-email', ' ', '', 'a b@example.com', 'a@b', `${'a'.repeat(250)}@example.com`, 'a@@example.com'])('refuses the email %j', async (email) => {
      const res = await signUp(new Browser(gw.url), email, PASSWORD);
      expect(res.status).toBe(400);
      expect(await errorText(res)).toBe('Enter a valid email address.');
    });

    it.each([
      ['too short', 'short pw'],
      ['too long', 'Lq8#vR2m!'.repeat(29)],
      ['one repeated character', 'aaaaaaaaaa'],
      ['a common password', 'password12'],
      ['a common password in other case', 'QWERTYUIOP'],
      ['the email’s local part inside', 'my-maxwell-secret'],
    ])('refuses a password that is %s', async (_what, password) => {
      const res = await signUp(new Browser(gw.url), 'maxwell@example.com', password);
      expect(res.status).toBe(400);
      expect(await errorText(res)).toMatch(/^Choose a (longer|shorter|stronger) password/);
    });

    it('trims and lower-cases the email', async () => {
      expect((await signUp(new Browser(gw.url), '  Trim.Me@Example.COM ', PASSWORD)).status).toBe(303);
      expect((await signIn(new Browser(gw.url), 'trim.me@example.com', PASSWORD)).status).toBe(303);
    });

    it('does not reveal an existing email: the right password signs in, a wrong one gets sign-in’s generic failure', async () => {
      const browser = new Browser(gw.url);
      const again = await signUp(browser, 'sam@example.com', PASSWORD);
      expect(again.status).toBe(303);
      expect((await browser.get('/dashboard')).status).toBe(200);
      const wrong = await signUp(new Browser(gw.url), 'sam@example.com', 'another good passphrase');
      const failedSignIn = await signIn(new Browser(gw.url), 'sam@example.com', 'another good passphrase');
      expect(wrong.status).toBe(failedSignIn.status);
      const text = await errorText(wrong);
      expect(text).toBe(await errorText(failedSignIn));
      expect(text).not.toMatch(/exist/i);
    });
  });
});

describe('per client address', () => {
  let gw: TestGateway | undefined;
  afterEach(async () => {
    await gw?.close();
    gw = undefined;
  });

  it('wrong passwords across many accounts from one address are throttled too', async () => {
    gw = await withGateway(generousAddress({ failures_per_address: 8 }));
    for (let i = 0; i < 8; i++) expect((await signIn(new Browser(gw.url), `spray${i}@example.com`, 'Winter2026!')).status).toBe(401);
    const res = await signIn(new Browser(gw.url), 'spray-next@example.com', 'Winter2026!');
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('sign-up is throttled per address', async () => {
    gw = await withGateway(generousAddress({ signups_per_address: 3 }));
    for (let i = 0; i < 3; i++) expect((await signUp(new Browser(gw.url), `new${i}@example.com`, PASSWORD)).status).toBe(303);
    const res = await signUp(new Browser(gw.url), 'new3@example.com', PASSWORD);
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await errorText(res)).toMatch(/Too many sign-ups from your address\. Try again in \d+ minutes?/);
  });
});
