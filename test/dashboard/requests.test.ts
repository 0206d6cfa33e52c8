// The Requests pages in headless Chromium (Debian's, driven by playwright-core): real records of
// requests sent through the gateway (a priced success, a failover over two upstreams, a 400 for an
// unknown model, a stream, a stream that breaks after its first event, a job, 55 more with a second
// key, a refused credential), read back through /v1/requests and /admin/v1/requests and checked on
// the page: the rows' cells, paging by cursor, filters kept in the URL, one record's detail (its
// attempts on a time axis, usage and cost, the captured bodies), the keyboard, empty and error
// states. Every view is checked with axe-core and photographed at desktop and phone widths under
// test/artifacts/dashboard-requests-*.png and dashboard-admin-requests-*.png.
import { mkdirSync } from 'node:fs';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { components } from '../../clients/typescript/src/schema.ts';
import { PASSWORD, startDashboardWorld, type DashboardWorld } from './setup.ts';
import { axe, watchErrors } from './page-checks.ts';

// Functions run in the page (page.evaluate) use its globals; the test's own types know no DOM: the
// little of it they use, declared here.
type El = {
  id: string;
  tagName: string;
  className: string;
  textContent: string | null;
  offsetTop: number;
  scrollWidth: number;
  clientWidth: number;
  dataset: Record<string, string | undefined>;
  nextElementSibling: El | null;
  closest(selector: string): El | null;
  getBoundingClientRect(): { top: number; right: number };
};
declare const document: { documentElement: El; activeElement: El | null; querySelector(selector: string): El | null; querySelectorAll(selector: string): ArrayLike<El> & Iterable<El> };
declare function getComputedStyle(el: El): { position: string };

type Rec = components['schemas']['RequestRecord'];
type List = components['schemas']['RequestList'];

const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };

let w: DashboardWorld;
let browser: Browser;
let dana: { context: BrowserContext; page: Page };
let ops: { context: BrowserContext; page: Page };
let laptop: { key: string; id: string; prefix: string };
let ci: { key: string; id: string; prefix: string };
let danaId = '';
/**
 * Records as /v1/requests gives them, newest first, of each key. (Dana's list also holds the
 * dashboard's own calls, made with her session as the pages load: the checks that need a fixed
 * list filter by key.)
 */
let laptopRecords: Rec[] = [];
let ciRecords: Rec[] = [];
/** The requests of the checks below, by what they were. */
let made: Record<'priced' | 'failover' | 'unknownModel' | 'stream' | 'breaks' | 'job', Rec>;

const pageErrors: string[] = [];
/** Console errors a step causes on purpose, each expected exactly once. */
const expectedErrors: RegExp[] = [];

const watch = (p: Page) => watchErrors(p, pageErrors, expectedErrors);

/** Signs in through the sign-in page, which then opens `next`. */
async function signIn(email: string, next = '/dashboard'): Promise<{ context: BrowserContext; page: Page }> {
  // The pages' CSP admits scripts from the gateway only: axe is injected where it is bypassed.
  const context = await browser.newContext({ viewport: DESKTOP, bypassCSP: true });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: w.gw.url });
  const page = await context.newPage();
  watch(page);
  await page.goto(`${w.gw.url}/signin?next=${encodeURIComponent(next)}`);
  await page.fill('#email', email);
  await page.fill('#password', PASSWORD);
  await page.click('#signin');
  await page.waitForURL(`${w.gw.url}${next}`);
  return { context, page };
}

/** The page's data has loaded: its heading is there and nothing says "Loading". */
async function settled(p: Page) {
  await p.locator('main h1').first().waitFor();
  await p.waitForFunction(() => !document.querySelector('.loading') && !document.querySelector('[aria-busy="true"]'));
}

async function go(p: Page, path: string) {
  await p.goto(`${w.gw.url}${path}`);
  await settled(p);
}


/**
 * As browser.test.ts reviews every page: axe at both widths, nothing wider than the window, at
 * 390 px the navigation in one row, labels on their values' lines; a full-page screenshot of each.
 */
async function review(p: Page, name: string) {
  await settled(p);
  for (const [label, size] of [['desktop', DESKTOP], ['phone', PHONE]] as const) {
    await p.setViewportSize(size);
    await p.waitForTimeout(150);
    const serious = await axe(p);
    expect(serious.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`), `${name} at ${label}`).toEqual([]);
    expect(await p.evaluate(() => document.documentElement.scrollWidth), `${name} fits ${size.width} px`).toBeLessThanOrEqual(size.width);
    // Nothing inside the page wider than its box either (a cell, a timeline's label, a body block).
    const overflowing = await p.evaluate(() =>
      [...document.querySelectorAll('main *')]
        .filter((el) => el.getBoundingClientRect().right > document.documentElement.clientWidth + 1 && getComputedStyle(el).position !== 'absolute')
        .map((el) => `${el.tagName.toLowerCase()}.${el.className}`),
    );
    expect(overflowing, `${name} at ${label}: nothing past the window's right edge`).toEqual([]);
    // The table fits the page's column (it may scroll in its box, but should not need to).
    const table = await p.evaluate(() => {
      const box = document.querySelector('.requests-table');
      return box ? box.scrollWidth - box.clientWidth : 0;
    });
    expect(table, `${name} at ${label}: the table fits its box`).toBeLessThanOrEqual(0);
    if (label === 'phone') {
      expect(await p.evaluate(() => new Set([...document.querySelectorAll('nav[aria-label="Dashboard"] a')].map((a) => a.offsetTop)).size), `${name}: navigation in one row`).toBe(1);
    }
    const split = await p.evaluate(() =>
      [...document.querySelectorAll('dl dt')].filter((dt) => dt.nextElementSibling && Math.abs(dt.getBoundingClientRect().top - dt.nextElementSibling.getBoundingClientRect().top) > 4).map((dt) => dt.textContent),
    );
    expect(split, `${name} at ${label}: labels on their values' lines`).toEqual([]);
    await p.screenshot({ path: `test/artifacts/dashboard-${name}-${label}.png`, fullPage: true });
  }
  await p.setViewportSize(DESKTOP);
}

const cells = async (row: Locator) => (await row.locator('td').allInnerTexts()).map((c) => c.replace(/\s+/g, ' ').trim());
const rowOf = (p: Page, r: Rec) => p.locator(`tr[data-request-id="${r.request_id}"]`);
/** "02:03:57 2026-11-28": the time cell (UTC). */
const timeCell = (r: Rec) => `${r.created_at.slice(11, 19)} ${r.created_at.slice(0, 10)}`;
/** The fake upstreams answer within a second: timings read "N ms". */
const ms = (n: number | null) => (n === null ? '—' : `${n} ms`);
const fmt = (n: number) => n.toLocaleString('en-US');

async function listOf(path: string, fetcher: (p: string) => Promise<List>): Promise<Rec[]> {
  const all: Rec[] = [];
  let cursor: string | null = null;
  do {
    const page: List = await fetcher(`${path}${path.includes('?') ? '&' : '?'}limit=200${cursor ? `&cursor=${cursor}` : ''}`);
    all.push(...page.data);
    cursor = page.next_cursor;
  } while (cursor);
  return all;
}

beforeAll(async () => {
  w = await startDashboardWorld({
    extra: {
      // A failover: the first upstream answers 404 (not retried, and its provider has one key: the
      // next upstream is tried at once), the second answers. A stream that breaks after its first event.
      models: `  - { id: gpt-4o-failover, endpoint: chat, upstreams: [{ provider: anthropic, model: fail404-model }, { provider: openai, model: text-model }] }
  - { id: gpt-4o-breaks, endpoint: chat, upstreams: [{ provider: openai, model: miderror-model }] }
`,
      settings: 'request_log: { capture_bodies: true }\n',
    },
  });
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  mkdirSync('test/artifacts', { recursive: true });
  const accounts = w.gw.services.accounts;
  // The pro plan: 300 requests a minute per key (the free plan's 20 would refuse the 50 below).
  const user = await accounts.createUser({ email: 'dana@example.com', name: 'Dana', plan: 'pro' });
  danaId = user.id;
  await accounts.setPassword(user.id, PASSWORD);
  const keyOf = async (name: string) => {
    const k = await accounts.createKey({ user: user.id, name });
    return { key: k.key, id: k.id, prefix: k.prefix };
  };
  laptop = await keyOf('laptop');
  ci = await keyOf('ci');
  const admin = await accounts.createUser({ email: 'ops@example.com', name: 'Ops' });
  await accounts.setPassword(admin.id, PASSWORD);
  await accounts.updateUser(admin.id, { role: 'admin' });
  // Straight to the Requests page: the dashboard's own reads (GET /v1/session, …) are logged like any
  // request through /v1, and a page opened before would have filled the log.
  dana = await signIn('dana@example.com', '/requests');
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await w?.close();
});

describe('a user’s requests', () => {
  it('before any request, the page says what fills it', async () => {
    await settled(dana.page);
    expect(await dana.page.locator('main h1').innerText()).toBe('Requests');
    expect(await dana.page.locator('nav[aria-label="Dashboard"] a[aria-current="page"]').innerText()).toBe('Requests');
    const empty = await dana.page.locator('.empty').innerText();
    expect(empty).toContain('No requests yet');
    expect(empty).toContain('Every request made with your API keys through /v1 is recorded here');
    expect(await dana.page.locator('.empty a[href="/keys"]').innerText()).toBe('Create one');
    await review(dana.page, 'requests-empty');
  }, 60_000);

  it('sends requests through the gateway; the log records them', async () => {
    const chat = (key: string, body: object) => w.gw.fetch('/v1/chat/completions', { method: 'POST', key, json: { messages: [{ role: 'user', content: 'Say hi' }], ...body } });
    // 55 with the second key first: its own list is two pages (50 and 5).
    for (let i = 0; i < 55; i += 11) {
      const batch = await Promise.all(Array.from({ length: 11 }, () => chat(ci.key, { model: 'gpt-4o-mini' })));
      expect(batch.map((r) => r.status)).toEqual(Array(11).fill(200));
      await Promise.all(batch.map((r) => r.arrayBuffer()));
    }
    // Each in turn, so that they arrive in this order. A priced model: 10 prompt and 20 completion
    // tokens at $0.000001 and $0.000002 (test/dashboard/setup.ts): $0.00005.
    const priced = await chat(laptop.key, { model: 'mistral-small', max_tokens: 20, messages: [{ role: 'user', content: 'x'.repeat(40) }] });
    expect(priced.status).toBe(200);
    await priced.arrayBuffer();
    const failover = await chat(laptop.key, { model: 'gpt-4o-failover' });
    expect(failover.status).toBe(200);
    await failover.arrayBuffer();
    const unknown = await chat(laptop.key, { model: 'no-such-model' });
    expect(unknown.status).toBe(400);
    await unknown.arrayBuffer();
    const stream = await chat(laptop.key, { model: 'gpt-4o-mini', stream: true });
    expect(await stream.text()).toContain('data: [DONE]');
    const breaks = await chat(laptop.key, { model: 'gpt-4o-breaks', stream: true });
    await breaks.text();
    const job = await w.gw.fetch('/v1/images/generations', { method: 'POST', key: laptop.key, json: { model: 'gpt-image-1', prompt: 'a lighthouse at dusk', sync: false } });
    expect(job.status).toBe(202);
    await job.arrayBuffer();
    // Someone else's request, and one with a key that does not exist: only the operator sees them.
    const other = await w.gw.newKey('pro');
    expect((await chat(other, { model: 'gpt-4o-mini' })).status).toBe(200);
    expect((await chat('mg-not-a-real-key-at-all-0000', { model: 'gpt-4o-mini' })).status).toBe(401);
    // The records, and the ledger's rows they are joined with (usage and cost), written at once.
    await Promise.all([w.gw.services.requestLog.flush(), w.gw.services.ledger.flush()]);

    const read = async (path: string) => (await w.gw.fetch(path, { headers: { cookie: await cookieOf(dana.context) } })).json() as Promise<List>;
    // The job's tokens are in the ledger once the job has run (the fake media upstream is quick);
    // reading the log is not itself logged.
    await expect
      .poll(async () => {
        await Promise.all([w.gw.services.requestLog.flush(), w.gw.services.ledger.flush()]);
        return (await read(`/v1/requests?key=${laptop.id}&limit=1`)).data[0]?.usage?.billed_tokens;
      }, { timeout: 10_000 })
      .toBeGreaterThan(0);
    laptopRecords = await listOf(`/v1/requests?key=${laptop.id}`, read);
    ciRecords = await listOf(`/v1/requests?key=${ci.id}`, read);
    expect(laptopRecords).toHaveLength(6);
    expect(ciRecords).toHaveLength(55);
    const [jobRec, breaksRec, streamRec, unknownRec, failoverRec, pricedRec] = laptopRecords as [Rec, Rec, Rec, Rec, Rec, Rec];
    made = { job: jobRec, breaks: breaksRec, stream: streamRec, unknownModel: unknownRec, failover: failoverRec, priced: pricedRec };
    // What the API says each was: the page is checked against these.
    expect(made.priced).toMatchObject({ model: 'mistral-small', status: 200, stream: false, upstream: 'openai#primary', key: { id: laptop.id, name: 'laptop' } });
    expect(made.priced.usage).toMatchObject({ prompt_tokens: 10, completion_tokens: 20, billed_tokens: 30, cost: '0.00005', source: 'reported' });
    expect(made.failover).toMatchObject({ model: 'gpt-4o-failover', status: 200 });
    expect(made.failover.attempts.map((a) => [a.provider, a.key, a.upstream_model, a.status, a.failure])).toEqual([
      ['anthropic', null, 'fail404-model', 404, 'http_404'],
      ['openai', made.failover.upstream, 'text-model', null, null],
    ]);
    expect(made.failover.upstream).toMatch(/^openai#(primary|1)$/);
    expect(made.unknownModel).toMatchObject({ model: 'no-such-model', status: 400, error_code: 'model_not_found', attempts: [], usage: null });
    expect(made.stream).toMatchObject({ model: 'gpt-4o-mini', stream: true, status: 200 });
    expect(made.breaks.attempts).toMatchObject([{ upstream_model: 'miderror-model', failure: null, late_failure: 'http_502' }]);
    expect(made.job.job_id).toMatch(/^job_/);
    expect(ciRecords.every((r) => r.model === 'gpt-4o-mini' && r.status === 200)).toBe(true);
    for (const r of [...laptopRecords, ...ciRecords]) expect(r.bodies).not.toBeNull();
  }, 90_000);

  it('lists the newest requests, each row as the API gives it, and pages to older ones by cursor', async () => {
    const p = dana.page;
    // The page's own reads (GET /v1/session, /v1/keys, …: the session's requests) are logged too,
    // like any request through /v1: written at once, they are among the rows after a reload.
    await go(p, '/requests');
    await w.gw.services.requestLog.flush();
    await p.reload();
    await settled(p);
    expect(await p.locator('thead th').allInnerTexts()).toEqual(['Time (UTC)', 'Status', 'Model', 'Endpoint', 'Key', 'Upstream', 'Latency', 'First token', 'Tokens', 'Cost', 'Flags']);
    const rows = p.locator('tbody tr');
    // A page of 50: the dashboard's calls, the six with the laptop key, then the other key's.
    expect(await rows.count()).toBe(50);
    const shown = await rows.evaluateAll((trs: El[]) => trs.map((tr) => tr.dataset.requestId));
    expect(shown.filter((id) => laptopRecords.some((r) => r.request_id === id))).toEqual(laptopRecords.map((r) => r.request_id));
    const lap = `laptop ${laptop.prefix}…`;
    const { priced, failover, unknownModel, stream, breaks, job } = made;
    expect(await cells(rowOf(p, priced))).toEqual([timeCell(priced), 'status 200', 'mistral-small', 'chat', lap, 'openai#primary', ms(priced.latency_ms), ms(priced.first_token_ms), '30', '$0.00005', '—']);
    expect(await cells(rowOf(p, failover))).toEqual([
      timeCell(failover),
      'status 200',
      'gpt-4o-failover',
      'chat',
      lap,
      `${failover.upstream} 2 attempts`,
      ms(failover.latency_ms),
      ms(failover.first_token_ms),
      fmt(failover.usage!.billed_tokens),
      '— no known price',
      '—',
    ]);
    expect(await cells(rowOf(p, unknownModel))).toEqual([timeCell(unknownModel), 'status 400 model_not_found', 'no-such-model', 'chat', lap, '—', ms(unknownModel.latency_ms), '—', '— not billed', '— not billed', '—']);
    expect(await cells(rowOf(p, stream))).toEqual([
      timeCell(stream),
      'status 200',
      'gpt-4o-mini',
      'chat',
      lap,
      stream.upstream!,
      ms(stream.latency_ms),
      ms(stream.first_token_ms),
      fmt(stream.usage!.billed_tokens),
      '— no known price',
      'stream',
    ]);
    expect((await cells(rowOf(p, breaks)))[10]).toBe('stream');
    // The job's tokens, billed when it ran.
    expect(await cells(rowOf(p, job))).toEqual([timeCell(job), 'status 202', 'gpt-image-1', 'images', lap, '—', ms(job.latency_ms), '—', fmt(job.usage!.billed_tokens), '— no known price', 'job']);
    // The dashboard's own reads (its pages with the signed-in session) are not logged.
    expect(await p.locator('tbody tr', { has: p.locator('td[data-label="Endpoint"]', { hasText: 'GET /v1/' }) }).count()).toBe(0);
    // Statuses coloured by class.
    expect(await rowOf(p, unknownModel).locator('.badge').first().getAttribute('class')).toBe('badge warn');
    expect(await rowOf(p, priced).locator('.badge').first().getAttribute('class')).toBe('badge ok');
    expect(await p.locator('.list-summary').innerText()).toMatch(/^50 requests, the newest, from \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} UTC back to \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} UTC$/);
    await review(p, 'requests');

    // One key's 55: Older goes to the next page by the API's cursor (in the URL: it can be
    // reloaded), its first row focused.
    await go(p, `/requests?key=${ci.id}`);
    const ids = () => rows.evaluateAll((trs: El[]) => trs.map((tr) => tr.dataset.requestId));
    expect(await ids()).toEqual(ciRecords.slice(0, 50).map((r) => r.request_id));
    await p.click('#older');
    await p.waitForFunction(() => document.querySelectorAll('tbody tr').length === 5);
    const url = new URL(p.url());
    expect(url.pathname).toBe('/requests');
    expect(url.searchParams.get('key')).toBe(ci.id);
    expect(url.searchParams.get('cursor')).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(await ids()).toEqual(ciRecords.slice(50).map((r) => r.request_id));
    expect(await p.evaluate(() => document.activeElement?.closest('tr')?.dataset.requestId)).toBe(ciRecords[50]!.request_id);
    expect(await p.locator('.pager').innerText()).toMatch(/^Newest\s+← Newer\s+No older requests$/);
    expect(await p.locator('.list-summary').innerText()).toMatch(/^5 requests \(an older page\), from /);
    await p.reload();
    await settled(p);
    expect(await ids()).toEqual(ciRecords.slice(50).map((r) => r.request_id));
    // After a reload the way back is "Newest" (the pages before are not known any more).
    expect(await p.locator('.pager').innerText()).toMatch(/^Newest\s+No older requests$/);
    await p.getByRole('link', { name: 'Newest' }).click();
    await p.waitForFunction(() => document.querySelectorAll('tbody tr').length === 50);
    expect(p.url()).toBe(`${w.gw.url}/requests?key=${ci.id}`);
    expect(await p.locator('.pager').innerText()).toMatch(/^The newest requests\s+Older →$/);
    await p.click('#older');
    await p.waitForFunction(() => document.querySelectorAll('tbody tr').length === 5);
    await p.getByRole('link', { name: '← Newer' }).click();
    await p.waitForFunction(() => document.querySelectorAll('tbody tr').length === 50);
    expect(p.url()).toBe(`${w.gw.url}/requests?key=${ci.id}`);
    expect(await ids()).toEqual(ciRecords.slice(0, 50).map((r) => r.request_id));
  }, 90_000);

  it('filters by status class, model, key and time, kept in the URL; says when nothing matches', async () => {
    const p = dana.page;
    await go(p, '/requests');
    await p.selectOption('#f-status', '4xx');
    await p.waitForURL(`${w.gw.url}/requests?status=4xx`);
    await p.waitForFunction(() => document.querySelectorAll('tbody tr').length === 1);
    expect(await p.locator('tbody tr').getAttribute('data-request-id')).toBe(made.unknownModel.request_id);
    // A reload shows the same view, the select showing its filter.
    await p.reload();
    await settled(p);
    expect(await p.locator('tbody tr').count()).toBe(1);
    expect(await p.inputValue('#f-status')).toBe('4xx');
    // A model with no 4xx: nothing matches.
    await p.fill('#f-model', 'gpt-4o-failover');
    await p.press('#f-model', 'Enter');
    await p.waitForURL(`${w.gw.url}/requests?model=gpt-4o-failover&status=4xx`);
    await settled(p);
    const empty = await p.locator('.empty').innerText();
    expect(empty).toContain('No request matches these filters');
    expect(await p.locator('.empty a').innerText()).toBe('clear the filters');
    await review(p, 'requests-no-match');
    await p.selectOption('#f-status', '');
    await p.waitForURL(`${w.gw.url}/requests?model=gpt-4o-failover`);
    await p.waitForFunction(() => document.querySelectorAll('tbody tr').length === 1);
    expect(await p.locator('tbody tr').getAttribute('data-request-id')).toBe(made.failover.request_id);
    await p.getByRole('link', { name: 'Clear' }).click();
    await p.waitForURL(`${w.gw.url}/requests`);
    await settled(p);
    // A select changed with the keyboard applies at once and keeps the focus.
    await p.focus('#f-status');
    await p.keyboard.press('ArrowDown');
    await p.waitForURL(`${w.gw.url}/requests?status=2xx`);
    await settled(p);
    expect(await p.evaluate(() => document.activeElement?.id)).toBe('f-status');
    await p.keyboard.press('ArrowUp');
    await p.waitForURL(`${w.gw.url}/requests`);
    await settled(p);
    // The key: a select of the user's keys.
    expect(await p.locator('#f-key option').allInnerTexts()).toEqual(['All keys', `ci (${ci.prefix}…)`, `laptop (${laptop.prefix}…)`]);
    await p.selectOption('#f-key', laptop.id);
    await p.waitForURL(`${w.gw.url}/requests?key=${laptop.id}`);
    await p.waitForFunction(() => document.querySelectorAll('tbody tr').length === 6);
    expect(await p.locator('.pager').innerText()).toMatch(/No older requests/);
    // Time: the last hour holds them all; a range before they were made holds none.
    await p.selectOption('#f-since', '1h');
    await p.waitForURL(`${w.gw.url}/requests?key=${laptop.id}&since=1h`);
    await p.waitForFunction(() => document.querySelectorAll('tbody tr').length === 6);
    await p.selectOption('#f-since', 'custom');
    expect(await p.locator('#f-start').isVisible()).toBe(true);
    await p.fill('#f-start', '2020-01-01T00:00:00');
    await p.fill('#f-end', '2020-01-02T00:00:00');
    await p.getByRole('button', { name: 'Apply' }).click();
    await p.waitForURL(`${w.gw.url}/requests?key=${laptop.id}&start=2020-01-01T00%3A00%3A00Z&end=2020-01-02T00%3A00%3A00Z`);
    await settled(p);
    expect(await p.locator('.empty h2').innerText()).toBe('No request matches these filters');
    expect(await p.inputValue('#f-since')).toBe('custom');
    expect(await p.inputValue('#f-start')).toBe('2020-01-01T00:00');
  }, 90_000);

  it('opens a record: its facts, the attempts on a time axis, usage and cost, the captured bodies', async () => {
    const p = dana.page;
    const f = made.failover;
    await go(p, `/requests?key=${laptop.id}`);
    // A click anywhere on the row (here its model) opens it.
    await rowOf(p, f).locator('td[data-label="Model"]').click();
    await p.waitForURL((u) => u.searchParams.get('id') === f.request_id);
    expect(new URL(p.url()).searchParams.get('key')).toBe(laptop.id);
    expect(new URL(p.url()).searchParams.get('at')).toBe(f.created_at);
    await settled(p);
    expect(await p.locator('main h1').innerText()).toBe('Request details');
    const facts = await p.locator('#request-facts').innerText();
    for (const part of [
      `Request id\n${f.request_id}`,
      `Time\n${f.created_at.replace('T', ' ').replace('Z', '')} UTC`,
      'Status\n200',
      'Model\ngpt-4o-failover',
      'Endpoint\nchat (openai format)',
      `Latency\n${f.latency_ms} ms`,
      `First token\n${f.first_token_ms} ms`,
      `Upstream\n${f.upstream}`,
      `Key\nlaptop ${laptop.prefix}… its requests`,
      'Stream\nno',
      'Job\nnone',
    ])
      expect(facts).toContain(part);
    // The timeline: both attempts, each at its start and for its time on one axis, the failed one
    // with its class and status, the answering one marked.
    const attempts = p.locator('#request-timeline li.attempt');
    expect(await attempts.count()).toBe(2);
    const [a1, a2] = f.attempts as [components['schemas']['RequestAttempt'], components['schemas']['RequestAttempt']];
    expect((await attempts.nth(0).innerText()).replace(/\s+/g, ' ').trim()).toBe(`1. anthropic fail404-model failed at ${a1.start_ms} ms, failed after ${a1.ms} ms: http_404 (HTTP 404)`);
    expect((await attempts.nth(1).innerText()).replace(/\s+/g, ' ').trim()).toBe(`2. ${f.upstream} text-model answered at ${a2.start_ms} ms, answered after ${a2.ms} ms`);
    expect(await attempts.nth(0).getAttribute('class')).toBe('attempt failed');
    expect(await attempts.nth(1).getAttribute('class')).toBe('attempt answered answering');
    expect(await p.locator('#request-timeline > p').innerText()).toBe(`2 attempts; first token at ${f.first_token_ms} ms; done at ${f.latency_ms} ms. Times from the request’s arrival.`);
    // Drawn to scale: a bar starts at start_ms and is ms long (at least 3 px) on the axis of the
    // request's whole time.
    const span = Math.max(f.latency_ms, f.first_token_ms ?? 0, ...f.attempts.map((a) => a.start_ms + (a.ms ?? 0)));
    for (const [i, a] of f.attempts.entries()) {
      const track = (await attempts.nth(i).locator('.track').boundingBox())!;
      const bar = (await attempts.nth(i).locator('.seg.main').boundingBox())!;
      expect(Math.abs(bar.x - track.x - (a.start_ms / span) * track.width), `attempt ${i + 1} starts at ${a.start_ms} ms`).toBeLessThan(1.5);
      expect(Math.abs(bar.width - Math.max(3, (a.ms! / span) * track.width)), `attempt ${i + 1} lasts ${a.ms} ms`).toBeLessThan(1.5);
    }
    // The axis is in milliseconds from 0 and ends at or before the request's end.
    const ticks = await p.locator('.axis-ticks span').allInnerTexts();
    expect(ticks[0]).toBe('0 ms');
    expect(ticks.length).toBeGreaterThanOrEqual(3);
    expect(Number(ticks.at(-1)!.replace(' ms', ''))).toBeLessThanOrEqual(span);
    // Usage and cost: every bucket.
    expect(await p.locator('#request-billed').innerText()).toBe(fmt(f.usage!.billed_tokens));
    expect(await p.locator('#request-cost').innerText()).toBe('—');
    const buckets = await p.locator('#request-usage dl').innerText();
    expect(buckets).toContain(`Prompt tokens\n${fmt(f.usage!.prompt_tokens)}`);
    expect(buckets).toContain(`Completion tokens\n${fmt(f.usage!.completion_tokens)}`);
    expect(buckets).toContain('Web search calls\n0');
    expect(await p.locator('#request-warnings').count()).toBe(0);
    // The bodies, fetched from their signed links: JSON pretty-printed.
    const requestBody = await p.locator('#request-body pre').innerText();
    expect(requestBody).toContain('\n  "model": "gpt-4o-failover"\n');
    expect(JSON.parse(requestBody)).toMatchObject({ model: 'gpt-4o-failover', messages: [{ role: 'user', content: 'Say hi' }] });
    expect(await p.locator('#request-body h3').innerText()).toMatch(/^Request body · JSON · [\d,]+ bytes$/);
    expect(JSON.parse(await p.locator('#response-body pre').innerText())).toMatchObject({ object: 'chat.completion' });
    await review(p, 'requests-detail');

    // Escape goes back to the list, focus on the row that was open; the arrow keys move between
    // rows and Enter opens one.
    await p.keyboard.press('Escape');
    await p.waitForURL(`${w.gw.url}/requests?key=${laptop.id}`);
    await settled(p);
    expect(await p.evaluate(() => document.activeElement?.closest('tr')?.dataset.requestId)).toBe(f.request_id);
    await p.keyboard.press('ArrowDown');
    expect(await p.evaluate(() => document.activeElement?.closest('tr')?.dataset.requestId)).toBe(made.priced.request_id);
    await p.keyboard.press('Enter');
    await p.waitForURL((u) => u.searchParams.get('id') === made.priced.request_id);
    await settled(p);
    expect(await p.locator('#request-cost').innerText()).toBe('$0.00005');
    expect(await p.locator('#request-usage .totals').innerText()).toMatch(/^30\s+billed tokens\s+\$0\.00005\s+cost$/);
    expect(await p.locator('#usage-source').innerText()).toBe('As the upstream reported them.');
    // Within the page: the newer one.
    await p.getByRole('link', { name: '↑ Newer request' }).click();
    await p.waitForURL((u) => u.searchParams.get('id') === f.request_id);
  }, 90_000);

  it('shows a stream’s events as text, a stream that broke after its first event, and a request no upstream saw', async () => {
    const p = dana.page;
    const open = async (r: Rec) => {
      await go(p, `/requests?key=${laptop.id}&id=${r.request_id}&at=${encodeURIComponent(r.created_at)}`);
      expect(await p.locator('#request-detail').getAttribute('data-request-id')).toBe(r.request_id);
    };
    await open(made.stream);
    const events = await p.locator('#response-body pre').innerText();
    expect(events).toMatch(/^data: \{/);
    expect(events.trimEnd()).toMatch(/data: \[DONE\]$/);
    expect(await p.locator('#response-body h3').innerText()).toMatch(/^Response body · SSE · [\d,]+ bytes$/);
    expect(await p.locator('#request-facts').innerText()).toContain('Stream\nyes');
    // The answer streamed on after its first event until the request ended.
    expect(await p.locator('li.attempt.answering .seg.tail').count()).toBe(1);

    const b = made.breaks;
    await open(b);
    const late = p.locator('#request-timeline li.attempt');
    expect(await late.getAttribute('class')).toBe('attempt late answering');
    expect((await late.innerText()).replace(/\s+/g, ' ').trim()).toBe(
      `1. ${b.attempts[0]!.key ?? 'openai'} miderror-model late failure at ${b.attempts[0]!.start_ms} ms, first event after ${b.attempts[0]!.ms} ms, then failed: http_502 (HTTP 502)`,
    );
    expect(await p.locator('li.attempt.late .seg.tail.late').count()).toBe(b.latency_ms > b.attempts[0]!.start_ms + b.attempts[0]!.ms! ? 1 : 0);
    expect(await p.locator('.legend').innerText()).toContain('stream broke (late failure)');
    await review(p, 'requests-detail-late-failure');

    await open(made.unknownModel);
    expect(await p.locator('#no-attempts').innerText()).toBe(`No upstream was called: the gateway answered itself (400 model_not_found) after ${made.unknownModel.latency_ms} ms.`);
    expect(await p.locator('#request-usage').innerText()).toContain('Not billed: the request was refused before it was admitted.');
    expect(JSON.parse(await p.locator('#response-body pre').innerText())).toMatchObject({ error: { code: 'model_not_found' } });
  }, 90_000);

  it('finds a linked record that is not on the page; says so when a body link fails or a record is unknown', async () => {
    const p = dana.page;
    // The other key's oldest request, far past the first page: found again by its time.
    const old = ciRecords.at(-1)!;
    await go(p, `/requests?id=${old.request_id}&at=${encodeURIComponent(old.created_at)}`);
    expect(await p.locator('#request-detail').getAttribute('data-request-id')).toBe(old.request_id);
    expect(await p.locator('#request-facts').innerText()).toContain(`Key\nci ${ci.prefix}…`);
    // No "Newer"/"Older" within a page it is not on.
    expect(await p.locator('.detail-nav a').allInnerTexts()).toEqual(['← All requests']);
    await p.getByRole('link', { name: '← All requests' }).click();
    await p.waitForURL(`${w.gw.url}/requests`);
    await settled(p);

    await go(p, `/requests?id=req_unknown&at=${encodeURIComponent(new Date().toISOString())}`);
    expect(await p.locator('.empty').innerText()).toContain('The log has no request req_unknown of yours');

    // Links expire: a body the link no longer serves says so.
    await p.route(/\/v1\/files\//, (route) => route.fulfill({ status: 410, contentType: 'application/json', body: '{"error":{"message":"expired"}}' }));
    expectedErrors.push(/Failed to load resource: the server responded with a status of 410/, /Failed to load resource: the server responded with a status of 410/);
    await go(p, `/requests?id=${made.priced.request_id}&at=${encodeURIComponent(made.priced.created_at)}`);
    expect(await p.locator('#request-body [role="alert"]').innerText()).toBe('Could not load the request body: the link answered 410 Gone. Its link may have expired: reload the page for a new one.');
    await p.unroute(/\/v1\/files\//);
  }, 60_000);

  it('a user without the role gets no operator page', async () => {
    await go(dana.page, '/admin/requests');
    expect(await dana.page.locator('main h1').innerText()).toBe('Not found');
  });
});

describe('an operator’s requests', () => {
  it('sees every user’s requests, with the user, and filters by user; an API error shows its message', async () => {
    ops = await signIn('ops@example.com');
    const p = ops.page;
    await go(p, '/admin/requests');
    expect(await p.locator('main h1').innerText()).toBe('All requests');
    expect(await p.locator('nav[aria-label="Dashboard"] a[aria-current="page"]').innerText()).toBe('All requests');
    expect(await p.locator('thead th').allInnerTexts()).toEqual(['Time (UTC)', 'Status', 'Model', 'Endpoint', 'Key', 'User', 'Upstream', 'Latency', 'First token', 'Tokens', 'Cost', 'Flags']);
    const all = await listOf('/admin/v1/requests', async (path) => (await w.gw.fetch(path, { headers: { cookie: await cookieOf(ops.context) } })).json() as Promise<List>);
    // The refused credential's request: no key, no user.
    const refused = all.find((r) => r.status === 401)!;
    expect(refused).toMatchObject({ key: null, user_id: null, oauth_app_id: null, error_code: 'invalid_api_key' });
    expect(await p.locator('tbody tr').count()).toBe(50);
    await review(p, 'admin-requests');
    // An exact status, from a link: the select names it.
    await go(p, '/admin/requests?status=401');
    expect(await p.inputValue('#f-status')).toBe('401');
    expect(await p.locator('#f-status option:checked').innerText()).toBe('Exactly 401');
    expect(await p.locator('tbody tr').count()).toBe(1);
    expect(await cells(rowOf(p, refused))).toEqual([
      timeCell(refused),
      'status 401 invalid_api_key',
      refused.model ?? '—',
      refused.endpoint ?? `${refused.method} ${refused.path}`,
      '—',
      '—',
      '—',
      ms(refused.latency_ms),
      '—',
      '— not billed',
      '— not billed',
      '—',
    ]);
    // One key's requests, each naming its user by email.
    await go(p, `/admin/requests?key=${laptop.id}`);
    expect(await p.inputValue('#f-key')).toBe(laptop.id);
    expect(await p.locator('tbody tr').evaluateAll((trs: El[]) => trs.map((tr) => tr.dataset.requestId))).toEqual(laptopRecords.map((r) => r.request_id));
    expect(await p.locator('tbody td[data-label="User"]').allInnerTexts()).toEqual(Array(6).fill('dana@example.com'));
    expect((await cells(rowOf(p, made.priced))).slice(4, 7)).toEqual([`laptop ${laptop.prefix}…`, 'dana@example.com', 'openai#primary']);
    await review(p, 'admin-requests-key');

    await go(p, '/admin/requests');
    await p.fill('#f-user', 'dana@example.com');
    await p.press('#f-user', 'Enter');
    await p.waitForURL(`${w.gw.url}/admin/requests?user=dana%40example.com`);
    await settled(p);
    const users = await p.locator('tbody td[data-label="User"]').allInnerTexts();
    expect(new Set(users)).toEqual(new Set(['dana@example.com']));
    // Their requests from a record: the user's id as the filter.
    await rowOf(p, made.breaks).locator('a.row-link').click();
    await settled(p);
    expect(await p.locator('#request-facts').innerText()).toContain('User\ndana@example.com their requests');
    await review(p, 'admin-requests-detail');
    await p.getByRole('link', { name: 'their requests' }).click();
    await p.waitForURL(`${w.gw.url}/admin/requests?user=${danaId}`);
    await settled(p);
    expect(await p.locator('tbody tr').count()).toBe(50);

    // The API's own message for a user it does not know.
    expectedErrors.push(/Failed to load resource: the server responded with a status of 404/);
    await go(p, '/admin/requests?user=nobody%40example.com');
    expect(await p.locator('main [role="alert"]').innerText()).toBe("Could not load requests: No user 'nobody@example.com'.");
    expect(await p.inputValue('#f-user')).toBe('nobody@example.com');
    await review(p, 'admin-requests-error');
  }, 90_000);

  it('no page had a script error or a console error, other than the ones caused on purpose', () => {
    expect(pageErrors).toEqual([]);
    expect(expectedErrors).toEqual([]);
  });
});

/** The context's session cookie, to read the API as the page does. */
async function cookieOf(context: BrowserContext): Promise<string> {
  return (await context.cookies(w.gw.url)).map((c) => `${c.name}=${c.value}`).join('; ');
}
