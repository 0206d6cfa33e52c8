// A minimal browser for server-rendered pages: a cookie jar, manual redirects and form posting.
export class Browser {
  readonly cookies = new Map<string, string>();
  /** `headers`: sent with every request (e.g. X-Forwarded-For, to come from elsewhere through a trusted proxy). */
  constructor(
    readonly base: string,
    readonly headers: Record<string, string> = {},
  ) {}

  private store(res: Response) {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const i = pair!.indexOf('=');
      const name = pair!.slice(0, i);
      const value = pair!.slice(i + 1);
      if (/max-age=0|expires=thu, 01 jan 1970/i.test(c) || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  async request(path: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    for (const [k, v] of Object.entries(this.headers)) if (!headers.has(k)) headers.set(k, v);
    if (this.cookies.size) headers.set('cookie', [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '));
    const url = path.startsWith('http') ? path : this.base + path;
    const res = await fetch(url, { ...init, headers, redirect: 'manual' });
    this.store(res);
    return res;
  }

  get(path: string) {
    return this.request(path);
  }

  post(path: string, form: Record<string, string>) {
    return this.request(path, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form).toString() });
  }

  /** The named hidden inputs of the first form on a page. */
  static fields(pageHtml: string): Record<string, string> {
    const out: Record<string, string> = {};
    for (const m of pageHtml.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) out[m[1]!] = m[2]!.replace(/&amp;/g, '&').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>');
    return out;
  }

  /** Fills the first form of `pagePath` (its CSRF token and hidden fields) with `fields` and posts it to `action`. */
  async submit(pagePath: string, action: string, fields: Record<string, string>): Promise<Response> {
    const form = Browser.fields(await (await this.get(pagePath)).text());
    return this.post(action, { ...form, ...fields });
  }

  /** A call to the API with the session cookie and, for changes, the session's CSRF token (as the dashboard makes it). */
  async api(method: string, path: string, json?: unknown): Promise<Response> {
    const headers: Record<string, string> = {};
    if (method !== 'GET') headers['x-csrf-token'] = ((await (await this.get('/v1/session')).json()) as { csrf_token: string }).csrf_token;
    if (json !== undefined) headers['content-type'] = 'application/json';
    return this.request(path, { method, headers, body: json === undefined ? undefined : JSON.stringify(json) });
  }

  /** The signed-in user's connected apps, through the API with the session. */
  async connectedApps(): Promise<{ id: string; app: { name: string }; api_key: { prefix: string } | null }[]> {
    return ((await (await this.api('GET', '/v1/connected-apps')).json()) as { data: never[] }).data;
  }

  signIn(email: string, password: string, extra: Record<string, string> = {}): Promise<Response> {
    return this.submit('/signin', '/signin', { email, password, ...extra });
  }

  async signUp(email: string, password = 'correct horse battery'): Promise<void> {
    const res = await this.submit('/signup', '/signup', { email, password, name: email.split('@')[0]! });
    if (res.status !== 303) throw new Error(`sign-up failed: ${res.status} ${await res.text()}`);
  }
}
