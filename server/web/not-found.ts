// An unknown path opened in a browser gets a page, not the API's JSON: the gateway's look, what is
// there instead, and a link home. API clients (the API's paths, or an Accept that prefers JSON)
// keep the JSON 404 (app.ts).
import type { FastifyRequest } from 'fastify';
import { DASHBOARD_PATHS } from '../../contract/dashboard-pages.ts';
import { closest } from '../config/schema-keys.ts';
import { html, page } from './html.ts';
import type { SessionUser } from './sessions.ts';

/** Paths whose clients are programs, whatever they accept. */
const API_PATH = /^\/(v1|admin\/v1|\.well-known|openapi\.json|healthz|readyz|metrics)(\/|$|\?)/;

/** The q-value `accept` gives a media type (exact, then `type/*`; `*\/*` is not enough for HTML). */
function quality(accept: string, type: string): number {
  let best = 0;
  for (const part of accept.split(',')) {
    const [range, ...params] = part.trim().toLowerCase().split(';');
    if (range !== type && range !== `${type.split('/')[0]}/*`) continue;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    best = Math.max(best, q ? Number(q.slice(2)) || 0 : 1);
  }
  return best;
}

/** A browser navigation to a page path: GET or HEAD, not an API path, HTML preferred to JSON. */
export function wantsHtmlPage(request: FastifyRequest): boolean {
  if (request.method !== 'GET' && request.method !== 'HEAD') return false;
  if (API_PATH.test(request.url)) return false;
  const accept = request.headers.accept ?? '';
  const htmlQ = quality(accept, 'text/html');
  return htmlQ > 0 && htmlQ >= quality(accept, 'application/json');
}

/** The page: the path asked for (when printable), the nearest dashboard page, a link home. */
export function notFoundPage(path: string | null, user: SessionUser | null): string {
  const guess = path ? closest(path.replace(/\/+$/, ''), DASHBOARD_PATHS) : undefined;
  return page(
    'Page not found',
    html`<h1>Page not found</h1>
<p>There is no page at ${path ? html`<code>${path}</code>` : 'this address'}.</p>
${guess ? html`<p>Did you mean <a href="${guess}">${guess}</a>?</p>` : ''}
<p><a class="button" href="/">${user ? 'Go to the dashboard' : 'Sign in'}</a> <a href="/docs">API reference</a></p>`,
    user,
  );
}
