// Server-rendered pages: a tagged template that escapes every interpolated value unless it is
// already markup, and one layout with frame-busting headers set by the caller.
import { FAVICON_PATH } from './favicon.ts';
export class Markup {
  constructor(readonly value: string) {}
  toString() {
    return this.value;
  }
}

const escapes: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escape = (s: string) => s.replace(/[&<>"']/g, (c) => escapes[c]!);

function render(v: unknown): string {
  if (v instanceof Markup) return v.value;
  if (Array.isArray(v)) return v.map(render).join('');
  if (v === null || v === undefined || v === false) return '';
  return escape(String(v));
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): Markup {
  let out = strings[0]!;
  values.forEach((v, i) => (out += render(v) + strings[i + 1]));
  return new Markup(out);
}

export function page(title: string, body: Markup, user?: { email: string | null; username: string | null } | null): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Model Gateway</title>
<link rel="icon" href="${FAVICON_PATH}" type="image/svg+xml">
<style>
  body { font: 16px/1.5 system-ui, sans-serif; margin: 0; background: #f6f7f9; color: #1d2330; }
  header { background: #1d2330; color: #fff; padding: .8rem 1.5rem; display: flex; justify-content: space-between; align-items: center; }
  header a { color: #cfd8ff; margin-left: 1rem; }
  main { max-width: 44rem; margin: 2rem auto; background: #fff; padding: 2rem; border-radius: 10px; box-shadow: 0 1px 4px rgba(0,0,0,.08); }
  h1 { margin-top: 0; font-size: 1.5rem; }
  label { display: block; margin: .8rem 0 .2rem; font-weight: 600; }
  input, textarea { width: 100%; box-sizing: border-box; padding: .5rem; border: 1px solid #c8ccd4; border-radius: 6px; font: inherit; }
  button, .button { padding: .55rem 1.2rem; border-radius: 6px; border: 0; background: #3451d1; color: #fff; font: inherit; cursor: pointer; text-decoration: none; display: inline-block; margin: .8rem .4rem 0 0; }
  button.secondary { background: #e4e7ee; color: #1d2330; }
  button.danger { background: #c0392b; }
  .error { background: #fdecea; color: #8a1c12; padding: .8rem 1rem; border-radius: 6px; }
  .notice { background: #eaf6ee; padding: .8rem 1rem; border-radius: 6px; }
  .app { display: flex; gap: 1rem; align-items: center; }
  .app img { width: 56px; height: 56px; border-radius: 10px; object-fit: cover; }
  ul.scopes li { margin: .3rem 0; }
  code { background: #f0f2f5; padding: .1rem .3rem; border-radius: 4px; word-break: break-all; }
  table { width: 100%; border-collapse: collapse; } td, th { text-align: left; padding: .4rem; border-bottom: 1px solid #eee; vertical-align: top; }
</style>
</head>
<body>
<header><strong>Model Gateway</strong><nav>${
    user
      ? html`<span>${user.username ?? user.email}</span><a href="/dashboard">Dashboard</a><a href="/connected">Connected apps</a>`
      : html`<a href="/signin">Sign in</a>`
  }</nav></header>
<main>
${body}
</main>
</body>
</html>`.value;
}

/** Headers every page sends: no framing (clickjacking), no caching of personal pages. */
export const pageHeaders = {
  'content-type': 'text/html; charset=utf-8',
  'x-frame-options': 'DENY',
  'content-security-policy': "default-src 'self'; img-src https: http: data:; style-src 'unsafe-inline'; frame-ancestors 'none'; form-action 'self' http: https:",
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
};
