// The README's two commands on a machine with no provider key and no config file, as a new operator
// runs them: `serve` in an empty directory with an empty DATA_DIR. Its log shows the embedded
// database being created and each migration applied, warns that the catalog is empty naming the
// exact variables to set, and gives the dashboard's address; in the browser the overview and the
// Models page say the same, and no example names a model that does not exist.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinProviders } from '../../server/boot/environment-config.ts';
import { loadConfig } from '../../server/boot/config.ts';
import { catalogSetup, setupAdvice } from '../../server/boot/setup.ts';
import { listMigrations } from '../../server/db/migrate.ts';
import { PASSWORD } from './setup.ts';

// Functions run in the page (page.evaluate) use its globals; the test's own types know no DOM.
declare const document: { querySelector(s: string): unknown; documentElement: { scrollWidth: number } };

const bin = new URL('../../bin/model-gateway.mjs', import.meta.url).pathname;
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const KEYS = 'OPENAI_API_KEY (openai), ANTHROPIC_API_KEY (anthropic), GEMINI_API_KEY (gemini), ELEVENLABS_API_KEY (elevenlabs), OPENROUTER_API_KEY (openrouter)';

let cwd: string;
let server: ChildProcess;
let url = '';
let log: { level: number; msg: string }[] = [];
let browser: Browser;
const consoleErrors: string[] = [];

beforeAll(async () => {
  cwd = mkdtempSync(path.join(tmpdir(), 'mg-first-run-'));
  const dataDir = path.join(cwd, 'data');
  // Only what a shell would pass: no provider key, no GATEWAY_CONFIG, and no gateway.config.yaml in cwd.
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_FORMAT: 'json', GATEWAY_METADATA_FETCH: 'off' };
  server = spawn(process.execPath, [bin, 'serve'], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  server.stdout!.on('data', (d) => (out += d));
  server.stderr!.on('data', (d) => (out += d));
  const info = path.join(dataDir, 'server.json');
  // A true first start: the embedded database is created and migrated (10–30 s, longer on a busy machine).
  for (let i = 0; i < 1800 && !existsSync(info) && server.exitCode === null; i++) await new Promise((r) => setTimeout(r, 100));
  expect(existsSync(info), out).toBe(true);
  url = JSON.parse(readFileSync(info, 'utf8')).url;
  for (let i = 0; i < 50 && !out.includes('admin API'); i++) await new Promise((r) => setTimeout(r, 100));
  log = out
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { level: number; msg: string });
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  mkdirSync('test/artifacts', { recursive: true });
}, 240_000);

afterAll(async () => {
  await browser?.close();
  if (server && server.exitCode === null) {
    const exited = new Promise((r) => server.once('exit', r));
    server.kill('SIGTERM');
    await exited;
  }
  rmSync(cwd, { recursive: true, force: true });
});

describe('serve with no provider key and no config file', () => {
  it('shows the first start’s progress, says what to set, and prints the dashboard’s address', () => {
    const messages = log.map((l) => l.msg);
    const migrations = listMigrations().map((m) => m.name);
    const at = (msg: string | RegExp) => messages.findIndex((m) => (typeof msg === 'string' ? m === msg : msg.test(m)));
    // The empty catalog: a warning naming every variable and the config file.
    const warning = log.find((l) => l.msg.startsWith('the catalog is empty'));
    expect(warning).toMatchObject({
      level: 40,
      msg:
        `the catalog is empty: no config file, and no provider API key in the environment. Set one or more of ${KEYS} and restart, ` +
        'or use a config file (GATEWAY_CONFIG=<file> or ./gateway.config.yaml; gateway.config.example.yaml shows every field).',
    });
    // Creation first, then each migration in order, then the database is ready.
    const created = at(`database: creating the embedded database in ${path.join(cwd, 'data', 'db')} (first start only; with its migrations this takes 10–30 s)…`);
    expect(created).toBeGreaterThanOrEqual(0);
    const applied = migrations.map((name, i) => at(`database: applying migration ${i + 1}/${migrations.length}: ${name}`));
    expect(applied.every((n, i) => n > (i ? applied[i - 1]! : created))).toBe(true);
    expect(messages[at(/^database: embedded /)]).toMatch(new RegExp(`^database: embedded \\(${path.join(cwd, 'data', 'db')}\\) ready in \\d+ ms, ${migrations.length} migrations applied$`));
    expect(at(/^database: embedded /)).toBeGreaterThan(applied.at(-1)!);
    // The listening line gives the dashboard's address first.
    expect(messages).toContainEqual(expect.stringMatching(new RegExp(`^model-gateway \\S+ listening on http://127\\.0\\.0\\.1:\\d+ — dashboard ${url}/, API ${url}/v1, reference ${url}/docs$`)));
  });

  it('GET /v1/session tells the dashboard the catalog is empty and which variable enables which provider', async () => {
    const page = await newPage();
    // The first account, made from this machine, is the administrator (decision 0033).
    await signUp(page, 'first@example.com');
    type Catalog = { models: number; setup: { problem: string; provider_keys: { provider: string; variable: string }[] } | null };
    const session = (await page.evaluate(async () => (await fetch('/v1/session')).json())) as { catalog: Catalog; user: { role: string } };
    expect(session.user.role).toBe('admin');
    expect(session.catalog).toEqual({
      models: 0,
      setup: {
        problem: 'no_provider_key',
        provider_keys: builtinProviders.map((p) => ({ provider: p.id, variable: p.env })),
        config_file: { variable: 'GATEWAY_CONFIG', default_path: 'gateway.config.yaml', example: 'gateway.config.example.yaml' },
      },
    });
    expect(session.catalog.setup!.provider_keys.map((k) => k.variable)).toEqual(['OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'GEMINI_API_KEY', 'ELEVENLABS_API_KEY', 'OPENROUTER_API_KEY']);
    await page.close();
  }, 60_000);

  it('the overview and the Models page say what the operator sets, and suggest no request that cannot work', async () => {
    const page = await newPage();
    // Sign-up is closed once the first account exists: its owner signs in again.
    await signIn(page, 'first@example.com');
    const notice = await page.locator('#catalog-setup').innerText();
    expect(notice).toContain('This gateway has no models yet');
    for (const p of builtinProviders) expect(notice).toContain(`${p.env} enables ${p.id}`);
    expect(notice).toContain('gateway.config.yaml');
    expect(notice).toContain('GATEWAY_CONFIG');
    const main = await page.locator('main').innerText();
    expect(main).toContain('Create your first API key');
    // No curl naming a model the catalog does not have.
    expect(main).not.toContain('curl');
    expect(await page.locator('.snippet').count()).toBe(0);
    await review(page, 'first-run-overview');

    await page.goto(`${url}/models`);
    await settled(page);
    expect(await page.locator('#catalog-setup').innerText()).toContain('OPENAI_API_KEY enables openai');
    expect(await page.locator('.models').count()).toBe(0);
    await review(page, 'first-run-models');

    // Nor does the Jobs page's empty state.
    await page.goto(`${url}/jobs`);
    await settled(page);
    expect(await page.locator('main').innerText()).toContain('No jobs yet');
    expect(await page.locator('.snippet').count()).toBe(0);
    await page.close();
    expect(consoleErrors).toEqual([]);
  }, 90_000);
});

describe('a config file without models', () => {
  it('is told apart from a missing key: the file is named, and the variables for the alternative', () => {
    const file = path.join(cwd, 'empty.yaml');
    writeFileSync(file, 'plans:\n  - { id: free, rank: 0, daily_tokens: 1000, requests_per_minute: 10 }\n');
    const { config } = loadConfig({ GATEWAY_CONFIG: file }, cwd);
    const setup = catalogSetup(config)!;
    expect(setup.problem).toBe('no_models_in_config_file');
    expect(setupAdvice(setup, config.source)).toBe(
      `the catalog is empty: the config file ${file} defines no models. Add providers and models to it (gateway.config.example.yaml shows every field), or remove it and set a provider API key: ${KEYS}.`,
    );
    // With one model there is nothing to set up.
    writeFileSync(file, 'providers: [{ id: o, type: openai, api_key: k }]\nmodels: [{ id: m, endpoint: chat, upstreams: [{ provider: o, model: m }] }]\n');
    expect(catalogSetup(loadConfig({ GATEWAY_CONFIG: file }, cwd).config)).toBeNull();
  });
});

async function newPage(): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, bypassCSP: true });
  const page = await context.newPage();
  page.on('pageerror', (err) => consoleErrors.push(`${page.url()}: ${err.message}`));
  page.on('console', (m) => m.type() === 'error' && consoleErrors.push(`${page.url()}: ${m.text()}`));
  return page;
}

async function signUp(page: Page, email: string) {
  await page.goto(`${url}/signup`);
  await page.fill('#email', email);
  await page.fill('#password', PASSWORD);
  await page.click('#signup');
  await page.waitForURL(`${url}/dashboard`);
  await settled(page);
}

async function signIn(page: Page, email: string) {
  await page.goto(`${url}/signin`);
  await page.fill('#email', email);
  await page.fill('#password', PASSWORD);
  await page.click('#signin');
  await page.waitForURL(`${url}/dashboard`);
  await settled(page);
}

async function settled(p: Page) {
  await p.locator('main h1').first().waitFor();
  await p.waitForFunction(() => !document.querySelector('.loading'));
}

/** axe at 1280 and 390 px (no serious or critical violation), nothing wider than the phone, a screenshot of each. */
async function review(p: Page, name: string) {
  for (const [label, size] of [['desktop', { width: 1280, height: 900 }], ['phone', { width: 390, height: 844 }]] as const) {
    await p.setViewportSize(size);
    await p.waitForTimeout(150);
    if (!(await p.evaluate(() => 'axe' in globalThis))) await p.addScriptTag({ content: axeSource });
    const violations = await p.evaluate(async () => {
      const a = (globalThis as unknown as { axe: { run(o: unknown): Promise<{ violations: { id: string; impact: string }[] }> } }).axe;
      return (await a.run({ runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] } })).violations;
    });
    expect(violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id), `${name} at ${label}`).toEqual([]);
    if (label === 'phone') {
      expect(await p.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    }
    await p.screenshot({ path: `test/artifacts/dashboard-${name}-${label}.png`, fullPage: true });
  }
  await p.setViewportSize({ width: 1280, height: 900 });
}
