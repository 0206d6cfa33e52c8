// The browsable API reference at /docs: Swagger UI (served from the @fastify/swagger-ui package, no
// CDN), dressed as the project's own pages (server/web/html.ts): their header, colours and type, a
// favicon of the project instead of Fastify's logo, no "Explore" bar (it invites loading any URL),
// and a CSP that keeps every request on this origin.
import type { FastifySwaggerUiOptions } from '@fastify/swagger-ui';
import { faviconSvg } from '../web/favicon.ts';


// The page's own header, and the head elements Swagger UI's template lacks (description, viewport).
const pageScript = `(function () {
  var head = document.head;
  function meta(name, content) { var m = document.createElement('meta'); m.name = name; m.content = content; head.appendChild(m); }
  meta('description', 'API reference of Model Gateway: one /v1 API in front of many model providers.');
  meta('viewport', 'width=device-width, initial-scale=1');
  var header = document.createElement('header');
  header.className = 'mg-header';
  header.innerHTML = '<a class="mg-brand" href="/docs">Model Gateway <span>API reference</span></a>' +
    '<nav aria-label="Gateway"><a href="/docs/guide">User guide</a><a href="/openapi.json">OpenAPI document</a><a href="/v1/models">Models</a><a href="/v1/models/status">Status</a><a href="/apps">Your apps</a></nav>';
  document.body.insertBefore(header, document.body.firstChild);
  var root = document.getElementById('swagger-ui');
  if (!root) return;
  // Swagger UI renders some controls without accessible names, and links inside its operation
  // buttons (the button itself opens the operation and sets the URL): named, made focusable, or
  // turned into plain text here as it renders them.
  function label(selector, name) {
    root.querySelectorAll(selector).forEach(function (el) { if (!el.hasAttribute('aria-label')) el.setAttribute('aria-label', name); });
  }
  function fix() {
    label('select#servers', 'Server');
    label('textarea.body-param__text', 'Request body');
    label('.opblock-body textarea:not([aria-label])', 'Value');
    label('input.operation-filter-input', 'Filter operations by tag or path');
    root.querySelectorAll('.opblock-summary-control a[href]').forEach(function (a) { a.removeAttribute('href'); });
    root.querySelectorAll('.highlight-code > pre, pre.microlight').forEach(function (pre) { if (!pre.hasAttribute('tabindex')) pre.tabIndex = 0; });
  }
  new MutationObserver(fix).observe(root, { childList: true, subtree: true });
  fix();
})();
`;

const css = `
body { background: #f6f7f9; color: #1d2330; }
.mg-header { background: #1d2330; color: #fff; padding: .8rem 1.5rem; display: flex; flex-wrap: wrap; gap: .5rem 1.5rem; justify-content: space-between; align-items: center; font: 16px/1.5 system-ui, sans-serif; }
.mg-header a { color: #cfd8ff; }
.mg-header nav a { margin-left: 1rem; }
.mg-brand { font-weight: 700; text-decoration: none; color: #fff !important; }
.mg-brand span { font-weight: 400; color: #cfd8ff; margin-left: .4rem; }
.swagger-ui, .swagger-ui .info .title, .swagger-ui .opblock-tag, .swagger-ui .opblock .opblock-summary-description,
.swagger-ui .opblock .opblock-summary-path, .swagger-ui .info li, .swagger-ui .info p, .swagger-ui .info table,
.swagger-ui .markdown p, .swagger-ui .renderedMarkdown p, .swagger-ui table thead tr th, .swagger-ui .parameter__name,
.swagger-ui .response-col_status, .swagger-ui label, .swagger-ui .btn, .swagger-ui select { font-family: system-ui, sans-serif; color: #1d2330; }
.swagger-ui .wrapper { max-width: 1200px; }
.swagger-ui .info { margin: 2rem 0 1.5rem; }
.swagger-ui .info .title { font-size: 2rem; }
.swagger-ui .info .title small { background: #5b6472; }
.swagger-ui .info .title small.version-stamp { background: #3451d1; }
.swagger-ui .opblock-tag a.nostyle, .swagger-ui .opblock-summary-path a.nostyle { color: inherit; }
.swagger-ui .info a, .swagger-ui .info .link { color: #3451d1; }
.swagger-ui .info .main .title + a, .swagger-ui .info hgroup.main a { color: #3451d1; }
.swagger-ui .scheme-container { background: #fff; box-shadow: 0 1px 2px rgba(29,35,48,.12); border-radius: 6px; margin: 0 0 1rem; }
.swagger-ui .btn.authorize { color: #1f6b3a; border-color: #1f6b3a; }
.swagger-ui .btn.authorize svg { fill: #1f6b3a; }
.swagger-ui .btn.execute { background: #2f4bc4; border-color: #2f4bc4; color: #fff; }
.swagger-ui .btn.cancel { color: #b3261e; border-color: #b3261e; }
.swagger-ui .opblock-tag { border-bottom-color: #d6dae2; }
.swagger-ui .opblock .opblock-summary-method { min-width: 72px; color: #fff; text-shadow: none; }
.swagger-ui .opblock.opblock-post .opblock-summary-method { background: #1f6b3a; }
.swagger-ui .opblock.opblock-get .opblock-summary-method { background: #2f4bc4; }
.swagger-ui .opblock.opblock-delete .opblock-summary-method { background: #b3261e; }
.swagger-ui .opblock.opblock-patch .opblock-summary-method { background: #0e6e66; }
.swagger-ui .opblock .opblock-summary-operation-id, .swagger-ui .opblock .opblock-summary-description { color: #2b3242; }
.swagger-ui .model-title, .swagger-ui .models h4, .swagger-ui section.models h4 span { color: #1d2330; }
.swagger-ui .prop-type { color: #5a2ea6; }
.swagger-ui .markdown code, .swagger-ui .renderedMarkdown code { color: #5a1f9e; background: rgba(29,35,48,.06); }
.swagger-ui .parameter__in, .swagger-ui .prop-format { color: #4d5566; }
.swagger-ui .response-col_links { color: #4d5566; }
.swagger-ui .opblock-description-wrapper p, .swagger-ui .response-col_description__inner p { color: #1d2330; }
.swagger-ui .filter-container .operation-filter-input { border-color: #8a93a3; }
`;

export const docsUiOptions: FastifySwaggerUiOptions = {
  routePrefix: '/docs',
  theme: {
    title: 'Model Gateway API reference',
    favicon: [{ filename: 'favicon.svg', rel: 'icon', type: 'image/svg+xml', sizes: 'any', content: faviconSvg }],
    css: [{ filename: 'model-gateway.css', content: css }],
    js: [{ filename: 'model-gateway.js', content: pageScript }],
  },
  uiConfig: {
    // BaseLayout: the reference without Swagger's top bar (its logo and "Explore" URL box).
    layout: 'BaseLayout',
    deepLinking: true,
    tryItOutEnabled: true,
    displayRequestDuration: true,
    filter: true,
    docExpansion: 'list',
    defaultModelsExpandDepth: 0,
    syntaxHighlight: { activate: true, theme: 'nord' },
  },
  // Never the public validator badge (a request to a third party per page view).
  validatorUrl: false,
  // No other site may frame the reference (clickjacking its "Try it out" with a visitor's key):
  // X-Frame-Options for browsers that ignore the CSP's frame-ancestors.
  uiHooks: {
    onRequest: (_request, reply, done) => {
      reply.header('x-frame-options', 'DENY');
      done();
    },
  },
  // Everything from this origin: the assets come from the package, the document from /docs/json,
  // "Try it out" calls this gateway. Swagger UI sets inline styles; images may be data: URIs.
  staticCSP: "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; font-src 'self' data:; object-src 'none'; base-uri 'self'; frame-ancestors 'none'; form-action 'self'",
};
