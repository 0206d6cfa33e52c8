// An unknown path: a browser (Accept prefers HTML, GET or HEAD, not an API path) gets an HTML 404
// page in the gateway's look with a link home and the nearest dashboard page; API clients keep the
// JSON 404. And the icon every page names (and browsers fetch by themselves) is served.
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser } from '../helpers/browser.ts';
import { minimalConfig, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

let gw: TestGateway;
// What Chromium sends when the address bar opens a page.
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8';

beforeAll(async () => {
  gw = await startTestGateway({ config: `${minimalConfig}auth: { local: { allow_signup: true } }\n` });
});
afterAll(() => gw?.close());

const get = (path: string, accept?: string, method = 'GET') => fetch(gw.url + path, { method, headers: accept ? { accept } : {} });

describe('an unknown path opened in a browser', () => {
  it('answers an HTML 404 page naming the path, the nearest dashboard page and a way home', async () => {
    const res = await get('/usagee', BROWSER_ACCEPT);
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('cache-control')).toBe('no-store');
    const html = await res.text();
    expect(html).toContain('<title>Page not found · Model Gateway</title>');
    expect(html).toContain('<link rel="icon" href="/favicon.svg" type="image/svg+xml">');
    expect(html).toContain('<h1>Page not found</h1>');
    expect(html).toContain('<p>There is no page at <code>/usagee</code>.</p>');
    expect(html).toContain('<p>Did you mean <a href="/usage">/usage</a>?</p>');
    // Signed out: home is the sign-in page ("/" sends there).
    expect(html).toContain('<a class="button" href="/">Sign in</a>');
  });

  it('under /admin too, without a suggestion when no page is close', async () => {
    const html = await (await get('/admin/nope', BROWSER_ACCEPT)).text();
    expect(html).toContain('<p>There is no page at <code>/admin/nope</code>.</p>');
    expect(html).not.toContain('Did you mean');
  });

  it('says "Go to the dashboard" to a signed-in user, and shows who is signed in', async () => {
    const b = new Browser(gw.url);
    await b.signUp('lost@example.com');
    const res = await b.request('/keyz', { headers: { accept: BROWSER_ACCEPT } });
    expect(res.status).toBe(404);
    const html = await res.text();
    expect(html).toContain('<a class="button" href="/">Go to the dashboard</a>');
    expect(html).toContain('<p>Did you mean <a href="/keys">/keys</a>?</p>');
    expect(html).toContain('<nav><span>lost</span><a href="/dashboard">Dashboard</a>');
  });

  it('escapes the path it names', async () => {
    const { status, body } = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      // A raw path (a URL string would be percent-encoded on the way).
      const { hostname, port } = new URL(gw.url);
      const req = httpRequest({ hostname, port, path: `/a<b>"c'`, headers: { accept: 'text/html' } }, (res) => {
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      });
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(404);
    expect(body).toContain('<p>There is no page at <code>/a&lt;b&gt;&quot;c&#39;</code>.</p>');
  });

  it('HEAD gets the status and the type, without a body', async () => {
    const res = await get('/usagee', BROWSER_ACCEPT, 'HEAD');
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await res.text()).toBe('');
  });
});

describe('API clients keep the JSON 404', () => {
  const json = { error: { message: 'Unknown route: GET /usagee.', type: 'invalid_request_error', code: 'not_found', param: null } };
  it.each([
    ['no Accept', undefined],
    ['Accept */* (curl)', '*/*'],
    ['Accept application/json', 'application/json'],
    ['JSON preferred to HTML', 'application/json, text/html;q=0.5'],
  ])('%s', async (_name, accept) => {
    const res = await get('/usagee', accept);
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await res.json()).toEqual(json);
  });

  it.each(['/v1/nope', '/v1', '/admin/v1/nope', '/.well-known/nope', '/healthz/x'])('%s, even from a browser', async (path) => {
    const res = await get(path, BROWSER_ACCEPT);
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('not_found');
  });

  it('a POST, even from a browser', async () => {
    const res = await get('/usagee', BROWSER_ACCEPT, 'POST');
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { message: string } }).error.message).toBe('Unknown route: POST /usagee.');
  });
});

describe('the favicon', () => {
  it.each(['/favicon.svg', '/favicon.ico'])('%s is the project’s icon', async (path) => {
    const res = await get(path);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/svg+xml');
    expect(await res.text()).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" viewBox="0 0 32 32">/);
  });

  it('is named by the sign-in page and by the dashboard’s page', async () => {
    expect(await (await get('/signin')).text()).toContain('<link rel="icon" href="/favicon.svg" type="image/svg+xml">');
    const b = new Browser(gw.url);
    await b.signUp('icon@example.com');
    expect(await (await b.get('/dashboard')).text()).toContain('<link rel="icon" href="/favicon.svg" type="image/svg+xml">');
  });
});
