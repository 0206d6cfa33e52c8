// The user guide served by the gateway at /docs/guide: docs/api.md rendered, and the guides it
// links to, every link of theirs working on the gateway; the API reference (/docs) and the OpenAPI
// document point to it. In Chromium: axe-core at 1280 and 390 px, and screenshots. The renderer's
// rules (escaping, code spans, tables, lists) are checked on small inputs.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GUIDES, guideLink } from '../../server/http/guide.ts';
import { renderMarkdown, slug } from '../../server/http/markdown.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

// Functions run in the page (page.evaluate) use its globals; the test's own types know no DOM.
declare const document: { documentElement: { scrollWidth: number } };

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
let gw: TestGateway;
let browser: Browser;

beforeAll(async () => {
  gw = await startTestGateway();
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await gw?.close();
});

const pathOf = (name: string) => (name ? `/docs/guide/${name}` : '/docs/guide');

describe('GET /docs/guide', () => {
  it('is docs/api.md as a page: its title, its sections with the anchors its contents link to, the error table', async () => {
    const res = await gw.fetch('/docs/guide');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    const html = await res.text();
    expect(html).toContain('<title>Using the Model Gateway API · Model Gateway</title>');
    expect(html).toContain('<h1 id="using-the-model-gateway-api">Using the Model Gateway API</h1>');
    expect(html).toContain('<h2 id="text-chat-completions-messages-responses">Text: chat completions, Messages, Responses</h2>');
    // The guide's own table of contents: every anchor it links to exists.
    const anchors = [...html.matchAll(/href="#([^"]+)"/g)].map((m) => m[1]!);
    expect(anchors.length).toBeGreaterThan(10);
    for (const a of anchors) expect(html, a).toContain(`id="${a}"`);
    expect(html).toContain('<code>file_not_found</code> (a hosted file&#39;s link is unknown, altered or expired)');
    expect(html).toContain('<a href="/openapi.json"><code>openapi/openapi.json</code></a>');
  });

  it.each(Object.keys(GUIDES))('%s: no Markdown left unrendered, and every link it has answers', async (name) => {
    const html = await (await gw.fetch(pathOf(name))).text();
    const text = html.replace(/<pre[\s\S]*?<\/pre>/g, '').replace(/<code>[\s\S]*?<\/code>/g, '');
    expect(text).not.toMatch(/```|\]\(|\*\*|^#+ /m);
    for (const [, href] of html.matchAll(/<a href="(\/[^"#]*)/g)) {
      expect((await gw.fetch(href!)).status, `${pathOf(name)} links ${href}`).toBe(200);
    }
  });

  it('is linked from the API reference and its OpenAPI description', async () => {
    const doc = (await (await gw.fetch('/openapi.json')).json()) as { info: { description: string } };
    expect(doc.info.description).toContain('served by this gateway at [`/docs/guide`](/docs/guide)');
    expect(doc.info.description).not.toContain('in the repository');
    const page = await browser.newPage();
    await page.goto(`${gw.url}/docs`);
    await page.locator('header.mg-header a', { hasText: 'User guide' }).click();
    await page.waitForURL(`${gw.url}/docs/guide`);
    expect(await page.locator('h1').innerText()).toBe('Using the Model Gateway API');
    await page.close();
  }, 60_000);

  it('reads well at 1280 and 390 px: no serious accessibility violation, nothing wider than a phone', async () => {
    const context = await browser.newContext({ bypassCSP: true });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    for (const name of ['', 'translation']) {
      await page.goto(gw.url + pathOf(name));
      for (const [label, size] of [['desktop', { width: 1280, height: 900 }], ['phone', { width: 390, height: 844 }]] as const) {
        await page.setViewportSize(size);
        if (!(await page.evaluate(() => 'axe' in globalThis))) await page.addScriptTag({ content: axeSource });
        const violations = await page.evaluate(async () => {
          const a = (globalThis as unknown as { axe: { run(o: unknown): Promise<{ violations: { id: string; impact: string }[] }> } }).axe;
          return (await a.run({ runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] } })).violations;
        });
        expect(violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id), `${name || 'api'} at ${label}`).toEqual([]);
        if (label === 'phone') expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
        await page.screenshot({ path: `test/artifacts/guide-${name || 'api'}-${label}.png`, fullPage: label === 'phone' ? false : true });
      }
    }
    expect(errors).toEqual([]);
    await context.close();
  }, 120_000);
});

describe('the guides’ Markdown', () => {
  const render = (md: string) => renderMarkdown(md, guideLink).html;

  it('escapes everything from the file; code spans keep what looks like Markdown', () => {
    expect(render('A <phoneme ph="x"> tag, `a *b* <c>`, **bold** and *it*.')).toBe(
      '<p>A &lt;phoneme ph=&quot;x&quot;&gt; tag, <code>a *b* &lt;c&gt;</code>, <strong>bold</strong> and <em>it</em>.</p>',
    );
  });

  it('links: other guides and the OpenAPI document on the gateway, anchors kept, unserved files as text', () => {
    expect(render('[`docs/oauth.md`](oauth.md#scopes), [spec](../openapi/openapi.json), [x](#errors), [ADR](decisions/0018-dashboard.md), [w](https://example.com/a?b=1&c=2)')).toBe(
      '<p><a href="/docs/guide/oauth#scopes"><code>docs/oauth.md</code></a>, <a href="/openapi.json">spec</a>, <a href="#errors">x</a>, ADR, <a href="https://example.com/a?b=1&amp;c=2">w</a></p>',
    );
  });

  it('tables (a `|` inside code stays in its cell), lists with continuation lines, fenced code', () => {
    expect(render('| a | `b|c` |\n|---|--:|\n| 1 | 2 |')).toBe(
      '<div class="table-wrap" tabindex="0" role="region" aria-label="Table 1"><table><thead><tr><th scope="col">a</th><th style="text-align:right" scope="col"><code>b|c</code></th></tr></thead><tbody><tr><td>1</td><td style="text-align:right">2</td></tr></tbody></table></div>',
    );
    expect(render('- one\n  more\n- two\n\n3. three\n4. four')).toBe('<ul><li>one more</li><li>two</li></ul>\n<ol start="3"><li>three</li><li>four</li></ol>');
    expect(render('```sh\ncurl -d \'{"a": "<b>"}\'\n```')).toBe('<pre tabindex="0" data-lang="sh"><code>curl -d &#39;{&quot;a&quot;: &quot;&lt;b&gt;&quot;}&#39;</code></pre>');
  });

  it('anchors as GitHub makes them', () => {
    expect(slug('Models: the catalog and its status')).toBe('models-the-catalog-and-its-status');
    expect(slug('Text: chat completions, Messages, Responses')).toBe('text-chat-completions-messages-responses');
  });
});
