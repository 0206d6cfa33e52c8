// Serves the dashboard built from web/ (scripts/build-web.mjs → dist/web): its page at every
// dashboard path (contract/dashboard-pages.ts) for a signed-in user, and its hashed assets. The
// page holds no data: it loads everything through the API with the session cookie.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { DASHBOARD_PATHS } from '../../contract/dashboard-pages.ts';
import { projectPath } from '../runtime/paths.ts';
import type { Services } from '../http/services.ts';
import { FAVICON_PATH, faviconSvg } from './favicon.ts';
import type { SessionUser } from './sessions.ts';

const assetsDir = projectPath('dist', 'web', 'assets');
const indexFile = projectPath('dist', 'web', 'index.html');
const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};

// Scripts and styles from this origin only: the page runs no inline script and loads nothing
// from elsewhere (the bundle carries its libraries).
const dashboardCsp = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob: https:; connect-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'";

export async function dashboardRoutes(
  app: FastifyInstance,
  _services: Services,
  signedIn: (request: FastifyRequest, reply: FastifyReply) => Promise<SessionUser | null>,
  pageHeaders: Record<string, string>,
) {
  let page: { html: string; mtimeMs: number } | null = null;
  /** index.html, read again when a rebuild replaced it. */
  async function indexHtml(): Promise<string | null> {
    const s = await stat(indexFile).catch(() => null);
    if (!s) return null;
    if (!page || page.mtimeMs !== s.mtimeMs) page = { html: await readFile(indexFile, 'utf8'), mtimeMs: s.mtimeMs };
    return page.html;
  }

  for (const p of DASHBOARD_PATHS) {
    app.get(p, async (request, reply) => {
      if (!(await signedIn(request, reply))) return reply;
      const html = await indexHtml();
      if (html === null) {
        return reply.status(503).headers(pageHeaders).send('<!doctype html><title>Dashboard not built</title><p>The dashboard has not been built: run <code>npm run build</code>.</p>');
      }
      return reply.headers({ ...pageHeaders, 'content-security-policy': dashboardCsp }).send(html);
    });
  }

  // Browsers ask for /favicon.ico by themselves; the pages name the SVG.
  for (const p of [FAVICON_PATH, '/favicon.ico']) {
    app.get(p, async (_request, reply) => reply.headers({ 'content-type': 'image/svg+xml', 'cache-control': 'public, max-age=86400', 'x-content-type-options': 'nosniff' }).send(faviconSvg));
  }

  app.get('/assets/:file', async (request, reply) => {
    const { file } = request.params as { file: string };
    const type = TYPES[path.extname(file)];
    const full = path.join(assetsDir, file);
    const s = /^[A-Za-z0-9_.-]+$/.test(file) && type ? await stat(full).catch(() => null) : null;
    if (!s?.isFile()) return reply.status(404).header('content-type', 'text/plain; charset=utf-8').send('Not found');
    // Names carry a hash of their content: cached for good.
    return reply
      .headers({ 'content-type': type!, 'content-length': String(s.size), 'cache-control': 'public, max-age=31536000, immutable', 'x-content-type-options': 'nosniff' })
      .send(createReadStream(full));
  });
}
