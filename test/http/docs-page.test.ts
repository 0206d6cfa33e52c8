// The API reference at /docs in headless Chromium (Debian's, driven by playwright-core): it shows the
// project's title and description, not Swagger's or Fastify's branding; every request it makes stays
// on the gateway (no CDN, no validator badge); and axe-core finds no serious accessibility violation.
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { minimalConfig, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

let gw: TestGateway;
let browser: Browser;
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

beforeAll(async () => {
  gw = await startTestGateway({ config: minimalConfig });
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  mkdirSync('test/artifacts', { recursive: true });
});

afterAll(async () => {
  await browser?.close();
  await gw?.close();
});

it('shows the project, not stock Swagger UI, and loads nothing from elsewhere', { timeout: 120_000 }, async () => {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const requests: string[] = [];
  const cspViolations: string[] = [];
  page.on('request', (r) => requests.push(r.url()));
  page.on('console', (m) => {
    if (m.type() === 'error') cspViolations.push(m.text());
  });
  await page.goto(`${gw.url}/docs`, { waitUntil: 'networkidle' });
  await page.locator('.swagger-ui .info .title').waitFor();

  expect(await page.title()).toBe('Model Gateway API reference');
  await expect.poll(() => page.locator('.swagger-ui .info .title').innerText()).toContain('Model Gateway API');
  const info = await page.locator('.swagger-ui .info').innerText();
  expect(info).toContain('self-hostable gateway');
  expect(info).not.toMatch(/UNLICENSED|licen[cs]e/i);
  expect(await page.locator('header.mg-header').innerText()).toContain('Model Gateway');
  // No Swagger top bar (Fastify logo, "Explore" URL box).
  expect(await page.locator('.topbar').count()).toBe(0);
  expect(await page.getByText('Explore', { exact: true }).count()).toBe(0);
  expect(await page.locator('link[rel="icon"]').getAttribute('href')).toContain('favicon.svg');
  expect(await page.locator('meta[name="description"]').getAttribute('content')).toContain('Model Gateway');
  // The operations are there, grouped by tag.
  expect(await page.locator('.opblock-tag').count()).toBeGreaterThan(5);
  expect(await page.locator('.opblock-summary-path', { hasText: '/v1/chat/completions' }).count()).toBe(1);
  // Servers: the gateway itself.
  expect(await page.locator('.servers select').innerText()).toContain('This gateway');

  // Deep linking: an operation's URL opens it (a fresh page: a hash change alone does not reload).
  const linked = await browser.newPage();
  linked.on('request', (r) => requests.push(r.url()));
  await linked.goto(`${gw.url}/docs#/Text/chatCompletions`, { waitUntil: 'networkidle' });
  await linked.locator('#operations-Text-chatCompletions.is-open').waitFor();
  await linked.close();

  const origin = new URL(gw.url).origin;
  const elsewhere = requests.filter((u) => !u.startsWith(origin) && !u.startsWith('data:'));
  expect(elsewhere).toEqual([]);
  expect(cspViolations).toEqual([]);

  await page.goto(`${gw.url}/docs`, { waitUntil: 'networkidle' });
  await page.locator('.swagger-ui .info .title').waitFor();
  await page.screenshot({ path: 'test/artifacts/docs-page.png' });
  console.log('docs page screenshot: test/artifacts/docs-page.png');
  await page.close();
});

it('has no serious or critical accessibility violations (axe-core)', { timeout: 120_000 }, async () => {
  // The page's CSP admits scripts from its own origin only: axe is injected in a context that bypasses it.
  const context = await browser.newContext({ bypassCSP: true, viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await page.goto(`${gw.url}/docs`, { waitUntil: 'networkidle' });
  await page.locator('.opblock-tag').first().waitFor();
  // One operation open too: its parameters, body and responses are what users read.
  await page.locator('#operations-Text-chatCompletions .opblock-summary-control').click();
  await page.locator('#operations-Text-chatCompletions.is-open .responses-wrapper').waitFor();
  await page.addScriptTag({ content: axeSource });
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(o: unknown): Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }> } }).axe;
    const result = await axe.run({ runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] } });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(' ')) }));
  });
  const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  if (violations.length) console.log('axe violations:', JSON.stringify(violations, null, 1));
  await page.screenshot({ path: 'test/artifacts/docs-page-operation.png', fullPage: false });
  expect(serious).toEqual([]);
  await context.close();
});
