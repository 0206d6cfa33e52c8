// The user guide (docs/api.md) and the guides it links to, rendered and served by the gateway at
// /docs/guide, so the API reference at /docs can point its readers to them on the gateway itself
// rather than "in the repository" they may not have.
import type { FastifyInstance } from 'fastify';
import { readFile, stat } from 'node:fs/promises';
import { projectPath } from '../runtime/paths.ts';
import { FAVICON_PATH } from '../web/favicon.ts';
import { escape, pageHeaders } from '../web/html.ts';
import { renderMarkdown } from './markdown.ts';

export const GUIDE_PATH = '/docs/guide';

/** The guides served, by their name under /docs/guide (api.md is the guide itself). */
export const GUIDES: Record<string, string> = {
  '': 'api.md',
  images: 'images.md',
  oauth: 'oauth.md',
  pronunciation: 'pronunciation.md',
  transcription: 'transcription.md',
  translation: 'translation.md',
};
const byFile = new Map(Object.entries(GUIDES).map(([name, file]) => [file, name ? `${GUIDE_PATH}/${name}` : GUIDE_PATH]));

/**
 * Where a guide's link goes on the gateway: another served guide, the OpenAPI document, an
 * anchor or an absolute URL; a file of the repository the gateway does not serve: no link (null).
 */
export function guideLink(href: string): string | null {
  if (/^(https?:|mailto:|#)/.test(href)) return href;
  const [file, anchor] = href.split('#', 2) as [string, string | undefined];
  const served = file === '../openapi/openapi.json' ? '/openapi.json' : byFile.get(file.replace(/^\.\//, ''));
  return served ? served + (anchor ? `#${anchor}` : '') : null;
}

const css = `
body { margin: 0; font: 16px/1.6 system-ui, sans-serif; background: #f6f7f9; color: #1d2330; }
.mg-header { background: #1d2330; color: #fff; padding: .8rem 1.5rem; display: flex; flex-wrap: wrap; gap: .5rem 1.5rem; justify-content: space-between; align-items: center; }
.mg-header a { color: #cfd8ff; }
.mg-header nav { display: flex; flex-wrap: wrap; gap: .3rem 1rem; }
.mg-brand { font-weight: 700; text-decoration: none; color: #fff !important; }
.mg-brand span { font-weight: 400; color: #cfd8ff; margin-left: .4rem; }
main { max-width: 62rem; margin: 1.5rem auto 3rem; background: #fff; padding: 1.5rem 2rem 2rem; border-radius: 10px; box-shadow: 0 1px 4px rgba(0,0,0,.08); min-width: 0; }
h1 { font-size: 1.8rem; margin-top: 0; } h2 { margin-top: 2.2rem; border-bottom: 1px solid #e3e6ec; padding-bottom: .3rem; } h3 { margin-top: 1.6rem; }
a { color: #2f49c4; }
code { font: .88em/1.5 ui-monospace, Menlo, Consolas, monospace; background: #eef0f4; padding: .05rem .3rem; border-radius: 4px; overflow-wrap: break-word; }
pre { background: #1b2130; color: #f1f3f8; padding: .8rem 1rem; border-radius: 8px; overflow-x: auto; }
pre code { background: none; padding: 0; color: inherit; overflow-wrap: normal; }
.table-wrap { overflow-x: auto; margin: 1rem 0; }
table { border-collapse: collapse; font-size: .92rem; }
th, td { text-align: left; vertical-align: top; padding: .4rem .6rem; border: 1px solid #dde1e8; }
th { background: #f3f5f8; }
:focus-visible { outline: 3px solid #f59e0b; outline-offset: 2px; }
@media (max-width: 760px) { main { margin: 0; border-radius: 0; padding: 1rem; } .mg-header { padding: .7rem 1rem; } }
`;

function guidePage(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(title)} · Model Gateway</title>
<link rel="icon" href="${FAVICON_PATH}" type="image/svg+xml">
<style>${css}</style>
</head>
<body>
<header class="mg-header"><a class="mg-brand" href="${GUIDE_PATH}">Model Gateway <span>User guide</span></a>
<nav aria-label="Gateway"><a href="/docs">API reference</a><a href="/openapi.json">OpenAPI document</a><a href="/dashboard">Dashboard</a></nav></header>
<main>
${body}
</main>
</body>
</html>`;
}

export async function guideRoutes(app: FastifyInstance) {
  const cache = new Map<string, { mtimeMs: number; html: string }>();
  /** The rendered page, rendered again when its file changed. */
  async function rendered(file: string): Promise<string | null> {
    const full = projectPath('docs', file);
    const s = await stat(full).catch(() => null);
    if (!s) return null;
    const hit = cache.get(file);
    if (hit?.mtimeMs === s.mtimeMs) return hit.html;
    const { title, html } = renderMarkdown(await readFile(full, 'utf8'), guideLink);
    const page = guidePage(title, html);
    cache.set(file, { mtimeMs: s.mtimeMs, html: page });
    return page;
  }
  for (const [name, file] of Object.entries(GUIDES)) {
    app.get(name ? `${GUIDE_PATH}/${name}` : GUIDE_PATH, async (_request, reply) => {
      const page = await rendered(file);
      // A distribution without docs/: the guide is in the project's repository.
      if (page === null) return reply.callNotFound();
      return reply.headers({ ...pageHeaders, 'cache-control': 'no-cache', 'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; frame-ancestors 'none'; base-uri 'none'" }).send(page);
    });
  }
}
