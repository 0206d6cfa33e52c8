// The API behind the dashboard, called as the dashboard calls it: the session cookie, its CSRF
// token on changes, the user's own keys, usage across keys, jobs, and the operator's admin API
// with an admin's session (every change logged with its actor).
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser } from '../helpers/browser.ts';
import { clearOfMinuteEdge } from '../helpers/time.ts';
import { NO_BUCKETS } from '../helpers/usage.ts';
import { errorBody } from '../helpers/gateway.ts';
import { PASSWORD, startDashboardWorld, type DashboardWorld } from './setup.ts';

let w: DashboardWorld;
const logs: string[] = [];
const utcDay = (t: Date | number) => new Date(t).toISOString().slice(0, 10);
/** The day this file started: its ledger rows are from then to now (a run may cross midnight). */
const firstDay = utcDay(Date.now());

beforeAll(async () => {
  w = await startDashboardWorld({ logger: pino({ level: 'info' }, { write: (line: string) => void logs.push(line) }) });
});
afterAll(() => w?.close());

let n = 0;
async function signedUp(): Promise<{ b: Browser; email: string; id: string }> {
  const email = `dash${++n}@example.com`;
  const b = new Browser(w.gw.url);
  await b.signUp(email, PASSWORD);
  const s = (await (await b.get('/v1/session')).json()) as { user: { id: string } };
  return { b, email, id: s.user.id };
}

const chat = (key: string, model = 'gpt-4o-mini') => w.gw.fetch('/v1/chat/completions', { method: 'POST', key, json: { model, messages: [{ role: 'user', content: 'hi' }] } });
const billedOf = async (res: Response, multiplier = 1) => {
  const body = (await res.json()) as { usage: { prompt_tokens: number; completion_tokens: number } };
  return Math.ceil((body.usage.prompt_tokens + body.usage.completion_tokens) * multiplier);
};

describe('the session', () => {
  it('GET /v1/session: the signed-in user and a CSRF token; 401 not_signed_in without a session', async () => {
    const anonymous = await w.gw.fetch('/v1/session');
    expect(anonymous.status).toBe(401);
    expect(await errorBody(anonymous)).toMatchObject({ type: 'authentication_error', code: 'not_signed_in' });
    const { b, email, id } = await signedUp();
    const res = await b.get('/v1/session');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      user: { id, email, name: email.split('@')[0], username: email.split('@')[0], avatar_url: null, plan: 'free', role: 'user' },
      csrf_token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      expires_at: expect.any(String),
      // The catalog has models: nothing to set up (test/dashboard/first-run.test.ts has the empty one).
      catalog: { models: 9, setup: null },
    });
  });

  it('changes need the session’s X-CSRF-Token: none or a wrong one is 403 csrf_token_invalid, and nothing changes', async () => {
    const { b } = await signedUp();
    for (const token of [undefined, 'x'.repeat(43)]) {
      const res = await b.request('/v1/keys', { method: 'POST', headers: { 'content-type': 'application/json', ...(token && { 'x-csrf-token': token }) }, body: JSON.stringify({ name: 'k' }) });
      expect(res.status).toBe(403);
      expect(await errorBody(res)).toMatchObject({ type: 'permission_error', code: 'csrf_token_invalid' });
    }
    // Another session's token is no better.
    const other = await signedUp();
    const theirs = ((await (await other.b.get('/v1/session')).json()) as { csrf_token: string }).csrf_token;
    const res = await b.request('/v1/keys', { method: 'POST', headers: { 'content-type': 'application/json', 'x-csrf-token': theirs }, body: JSON.stringify({ name: 'k' }) });
    expect(res.status).toBe(403);
    expect(((await (await b.api('GET', '/v1/keys')).json()) as { data: unknown[] }).data).toEqual([]);
  });

  it('a signed-out or expired session is 401 not_signed_in on every route that takes it', async () => {
    const { b } = await signedUp();
    const csrf = ((await (await b.get('/v1/session')).json()) as { csrf_token: string }).csrf_token;
    expect((await b.post('/signout', { csrf })).status).toBe(303);
    b.cookies.set('mg_session', 'gone');
    for (const path of ['/v1/keys', '/v1/usage', '/v1/jobs', '/v1/apps', '/v1/connected-apps']) {
      const res = await b.get(path);
      expect(res.status, path).toBe(401);
      expect((await errorBody(res)).code).toBe('not_signed_in');
    }
  });
});

describe('API keys', () => {
  it('create (shown once), list (prefix, never the key), use, revoke: refused at once on this instance', async () => {
    const { b } = await signedUp();
    const created = await b.api('POST', '/v1/keys', { name: 'laptop' });
    expect(created.status).toBe(201);
    const key = (await created.json()) as { id: string; key: string; prefix: string; name: string; limits: unknown };
    expect(key).toMatchObject({ name: 'laptop', prefix: key.key.slice(0, 9), revoked_at: null, last_used_at: null });
    expect(key.limits).toMatchObject({ daily_tokens: { limit: 100000, used: 0, remaining: 100000 }, requests_per_minute: { limit: 20, used: 0 }, concurrent_jobs: { limit: 2, active: 0 } });
    const billed = await billedOf(await chat(key.key));
    const list = (await (await b.api('GET', '/v1/keys')).json()) as { data: any[] };
    expect(JSON.stringify(list)).not.toContain(key.key);
    expect(list.data).toEqual([
      expect.objectContaining({ id: key.id, name: 'laptop', prefix: key.prefix, last_used_at: expect.any(String), limits: expect.objectContaining({ daily_tokens: expect.objectContaining({ used: billed }) }) }),
    ]);
    const revoked = await b.api('POST', `/v1/keys/${key.id}/revoke`);
    expect(revoked.status).toBe(200);
    expect(await revoked.json()).toMatchObject({ id: key.id, revoked_at: expect.any(String), limits: null });
    const refused = await chat(key.key);
    expect(refused.status).toBe(401);
    expect((await errorBody(refused)).code).toBe('invalid_api_key');
  });

  it('another user’s key is 404 key_not_found, and stays working; an empty name is 400 with param', async () => {
    const alice = await signedUp();
    const bob = await signedUp();
    const aliceKey = (await (await alice.b.api('POST', '/v1/keys', { name: 'a' })).json()) as { id: string; key: string };
    const res = await bob.b.api('POST', `/v1/keys/${aliceKey.id}/revoke`);
    expect(res.status).toBe(404);
    expect(await errorBody(res)).toMatchObject({ code: 'key_not_found' });
    expect((await chat(aliceKey.key)).status).toBe(200);
    const empty = await bob.b.api('POST', '/v1/keys', { name: '  ' });
    expect(empty.status).toBe(400);
    expect((await errorBody(empty)).param).toBe('name');
  });

  it('only the session makes and revokes keys: an API key gets 403 session_required, and may still list them', async () => {
    const { b } = await signedUp();
    const first = (await (await b.api('POST', '/v1/keys', { name: 'script' })).json()) as { id: string; key: string };
    const viaKey = await w.gw.fetch('/v1/keys', { method: 'POST', key: first.key, json: { name: 'made by a script' } });
    expect(viaKey.status).toBe(403);
    expect(await errorBody(viaKey)).toMatchObject({ type: 'permission_error', code: 'session_required' });
    const revokeViaKey = await w.gw.fetch(`/v1/keys/${first.id}/revoke`, { method: 'POST', key: first.key });
    expect(revokeViaKey.status).toBe(403);
    expect((await errorBody(revokeViaKey)).code).toBe('session_required');
    const listed = (await (await w.gw.fetch('/v1/keys', { key: first.key })).json()) as { data: { revoked_at: string | null }[] };
    expect(listed.data).toHaveLength(1);
    expect(listed.data[0]!.revoked_at).toBeNull();
  });

  it('the session alone cannot call inference: 401 api_key_required on every inference route, nothing counted', async () => {
    const { b } = await signedUp();
    const csrf = ((await (await b.get('/v1/session')).json()) as { csrf_token: string }).csrf_token;
    const form = new FormData();
    form.set('model', 'whisper-1');
    form.set('file', new Blob([new Uint8Array(64)]), 'a.wav');
    const calls: [string, RequestInit][] = [
      ['/v1/chat/completions', { body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }), headers: { 'content-type': 'application/json' } }],
      ['/v1/messages', { body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }), headers: { 'content-type': 'application/json' } }],
      ['/v1/responses', { body: JSON.stringify({ model: 'gpt-4o-mini', input: 'hi' }), headers: { 'content-type': 'application/json' } }],
      ['/v1/embeddings', { body: JSON.stringify({ model: 'text-embedding-3-small', input: 'hi' }), headers: { 'content-type': 'application/json' } }],
      ['/v1/moderations', { body: JSON.stringify({ input: 'hi' }), headers: { 'content-type': 'application/json' } }],
      ['/v1/images/generations', { body: JSON.stringify({ model: 'gpt-image-1', prompt: 'a cat' }), headers: { 'content-type': 'application/json' } }],
      ['/v1/audio/speech', { body: JSON.stringify({ model: 'tts-1', input: 'hi', voice: 'alloy' }), headers: { 'content-type': 'application/json' } }],
      ['/v1/audio/transcriptions/jobs', { body: form }],
    ];
    for (const [path, init] of calls) {
      const res = await b.request(path, { method: 'POST', ...init, headers: { ...(init.headers as Record<string, string>), 'x-csrf-token': csrf } });
      expect(res.status, path).toBe(401);
      expect(await errorBody(res), path).toMatchObject({ type: 'authentication_error', code: 'api_key_required' });
    }
    const usage = (await (await b.api('GET', '/v1/usage')).json()) as { totals: { requests: number } };
    expect(usage.totals.requests).toBe(0);
  });
});

describe('usage with the session', () => {
  it('covers every key of the user, per model and per day and model, with errors; `key` narrows to one; limits add up', async () => {
    await clearOfMinuteEdge(); // the requests and the per-minute and per-day figures in one window
    const { b } = await signedUp();
    const k1 = (await (await b.api('POST', '/v1/keys', { name: 'one' })).json()) as { id: string; key: string };
    const k2 = (await (await b.api('POST', '/v1/keys', { name: 'two' })).json()) as { id: string; key: string };
    const mini = await billedOf(await chat(k1.key));
    const mini2 = await billedOf(await chat(k2.key));
    // The premium model needs the pro plan: refused at admission, neither counted nor in the ledger.
    expect((await chat(k2.key, 'gpt-5-pro')).status).toBe(403);
    const msg = await w.gw.fetch('/v1/messages', { method: 'POST', key: k2.key, json: { model: 'claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] } });
    const m = (await msg.json()) as { usage: { input_tokens: number; output_tokens: number } };
    const claude = Math.ceil((m.usage.input_tokens + m.usage.output_tokens) * 3);
    // The upstream refuses: a request with an error status, billed nothing.
    expect((await chat(k1.key, 'gpt-4o-broken')).status).toBe(400);

    const all = (await (await b.api('GET', '/v1/usage')).json()) as any;
    expect(all.totals).toMatchObject({ requests: 4, errors: 1, billed_tokens: mini + mini2 + claude });
    expect(all.by_model.map((r: any) => [r.model, r.requests, r.errors, r.billed_tokens])).toEqual([
      ['claude-sonnet-4-5', 1, 0, claude],
      ['gpt-4o-broken', 1, 1, 0],
      ['gpt-4o-mini', 2, 0, mini + mini2],
    ]);
    const day = all.by_day.find((d: any) => d.date === utcDay(Date.now()));
    // These models have no price: no cost; the refused request cost nothing (known: $0).
    expect(day.models.map((r: any) => [r.model, r.requests, r.errors, r.billed_tokens, r.cost, r.unpriced_requests])).toEqual([
      ['claude-sonnet-4-5', 1, 0, claude, null, 1],
      ['gpt-4o-broken', 1, 1, 0, '0', 0],
      ['gpt-4o-mini', 2, 0, mini + mini2, null, 2],
    ]);
    // A day's models carry the full totals (tokens and buckets too): the period has one day with requests, so they are the per-model rows.
    expect(day.models).toEqual(all.by_model.map(({ metered: _, ...r }: any) => ({ ...r, ...NO_BUCKETS })));
    expect(day.models).toEqual(all.by_model.map(({ metered: _, ...r }: any) => r));
    expect(all.by_day).toHaveLength(7);
    // Two active keys: two allowances.
    expect(all.limits.daily_tokens).toMatchObject({ limit: 200000, used: mini + mini2 + claude, remaining: 200000 - mini - mini2 - claude });
    expect(all.limits.requests_per_minute).toMatchObject({ limit: 40, used: 4 });
    expect(all.plan.premium_models).toEqual([{ model: 'gpt-5-pro', required_plan: 'pro', allowed: false }]);

    const one = (await (await b.api('GET', `/v1/usage?key=${k1.id}`)).json()) as any;
    expect(one.totals).toMatchObject({ requests: 2, errors: 1, billed_tokens: mini });
    expect(one.limits.daily_tokens).toMatchObject({ limit: 100000, used: mini });
    // An API key sees itself only.
    const self = await w.gw.fetch(`/v1/usage?key=${k2.id}`, { key: k1.key });
    expect(self.status).toBe(404);
    expect(await errorBody(self)).toMatchObject({ code: 'key_not_found', param: 'key' });
  });

  it('a user without keys gets zero limits and an empty breakdown', async () => {
    const { b } = await signedUp();
    const today = utcDay(Date.now());
    const r = (await (await b.api('GET', `/v1/usage?start=${today}&end=${today}`)).json()) as any;
    expect(r.limits.daily_tokens).toMatchObject({ limit: 0, used: 0, remaining: 0 });
    expect(r.totals.requests).toBe(0);
    expect(r.by_day).toEqual([
      { date: today, requests: 0, errors: 0, prompt_tokens: 0, completion_tokens: 0, cached_tokens: 0, reasoning_tokens: 0, billed_tokens: 0, ...NO_BUCKETS, cost: '0', unpriced_requests: 0, models: [] },
    ]);
  });
});

describe('jobs', () => {
  it('the session lists the jobs of every key of the user, newest first; a key its own; downloads work with the session', async () => {
    const { b } = await signedUp();
    const k1 = (await (await b.api('POST', '/v1/keys', { name: 'one' })).json()) as { key: string };
    const k2 = (await (await b.api('POST', '/v1/keys', { name: 'two' })).json()) as { key: string };
    const submit = async (key: string) =>
      ((await (await w.gw.fetch('/v1/images/generations', { method: 'POST', key, json: { model: 'gpt-image-1', prompt: 'a lighthouse', sync: false } })).json()) as { id: string }).id;
    const a = await submit(k1.key);
    const c = await submit(k2.key);
    const listed = (await (await b.api('GET', '/v1/jobs')).json()) as { data: { id: string }[] };
    expect(listed.data.map((j) => j.id)).toEqual([c, a]);
    const own = (await (await w.gw.fetch('/v1/jobs', { key: k1.key })).json()) as { data: { id: string }[] };
    expect(own.data.map((j) => j.id)).toEqual([a]);
    const status = await b.api('GET', `/v1/images/generations/${a}`);
    expect(status.status).toBe(200);
    const other = await signedUp();
    const refused = await other.b.api('GET', `/v1/images/generations/${a}`);
    expect(refused.status).toBe(403);
  });
});

describe('the operator (admin role) through the admin API with the session', () => {
  it('a user without the admin role gets 403 admin_role_required', async () => {
    const { b } = await signedUp();
    const res = await b.api('GET', '/admin/v1/users');
    expect(res.status).toBe(403);
    expect(await errorBody(res)).toMatchObject({ code: 'admin_role_required' });
  });

  it('search users, change a plan (the user’s limits follow at once), disable (keys refused, signed out), every change logged with the actor', async () => {
    const admin = await signedUp();
    await w.gw.services.accounts.updateUser(admin.id, { role: 'admin' });
    const user = await signedUp();
    const key = (await (await user.b.api('POST', '/v1/keys', { name: 'k' })).json()) as { key: string };
    expect((await chat(key.key)).status).toBe(200);

    const found = (await (await admin.b.api('GET', `/admin/v1/users?q=${encodeURIComponent(user.email.toUpperCase())}`)).json()) as { data: any[] };
    expect(found.data).toEqual([expect.objectContaining({ id: user.id, email: user.email, plan: 'free', role: 'user', disabled: false })]);
    const plans = (await (await admin.b.api('GET', '/admin/v1/plans')).json()) as { data: any[] };
    expect(plans.data.map((p) => [p.id, p.default])).toEqual([
      ['free', true],
      ['pro', false],
    ]);

    const changed = await admin.b.api('PATCH', `/admin/v1/users/${user.id}`, { plan: 'pro' });
    expect(changed.status).toBe(200);
    expect(await changed.json()).toMatchObject({ plan: 'pro' });
    const usage = (await (await w.gw.fetch('/v1/usage', { key: key.key })).json()) as any;
    expect(usage.plan).toMatchObject({ id: 'pro', daily_tokens: 5000000 });
    expect(usage.plan.premium_models).toEqual([{ model: 'gpt-5-pro', required_plan: 'pro', allowed: true }]);
    expect((await chat(key.key, 'gpt-5-pro')).status).toBe(200);

    const self = await admin.b.api('PATCH', `/admin/v1/users/${admin.id}`, { disabled: true });
    expect(self.status).toBe(400);
    expect(await errorBody(self)).toMatchObject({ code: 'cannot_change_self', param: 'disabled' });
    const nothing = await admin.b.api('PATCH', `/admin/v1/users/${user.id}`, {});
    expect(nothing.status).toBe(400);

    expect((await admin.b.api('PATCH', `/admin/v1/users/${user.id}`, { disabled: true })).status).toBe(200);
    expect((await chat(key.key)).status).toBe(401);
    expect((await user.b.get('/v1/session')).status).toBe(401);
    expect((await user.b.signIn(user.email, PASSWORD)).status).toBe(401);

    const audit = logs.map((l) => JSON.parse(l)).filter((l) => l.audit?.target === user.id);
    expect(audit.map((l) => [l.audit.actor, l.audit.action, l.audit.change])).toEqual([
      [admin.id, 'user.update', { plan: 'pro' }],
      [admin.id, 'user.update', { disabled: true }],
    ]);
  });

  it('usage across users: totals, top users and models, per day', async () => {
    const admin = await signedUp();
    await w.gw.services.accounts.updateUser(admin.id, { role: 'admin' });
    const r = (await (await admin.b.api('GET', `/admin/v1/usage?start=${firstDay}&end=${utcDay(Date.now())}&limit=2`)).json()) as any;
    await w.gw.services.ledger.flush();
    const rows = await w.gw.services.db.prisma.usageRecord.findMany();
    const billed = rows.reduce((s, x) => s + Number(x.billedTokens), 0);
    expect(r.totals).toMatchObject({ requests: rows.length, errors: rows.filter((x) => x.status >= 400).length, billed_tokens: billed });
    expect(r.top_users).toHaveLength(2);
    expect(r.top_users[0].billed_tokens).toBeGreaterThanOrEqual(r.top_users[1].billed_tokens);
    const perModel = new Map<string, number>();
    for (const x of rows) perModel.set(x.model, (perModel.get(x.model) ?? 0) + Number(x.billedTokens));
    const top = [...perModel].sort((a, b) => b[1] - a[1]).slice(0, 2);
    expect(r.top_models.map((m: any) => [m.model, m.billed_tokens])).toEqual(top);
    // One day, or two when this file ran across midnight.
    const days = [...new Set(rows.map((x) => utcDay(x.createdAt)))].sort();
    expect(r.by_day).toEqual(
      days.map((date) => {
        const of = rows.filter((x) => utcDay(x.createdAt) === date);
        // The sum of the known costs (exact decimals); null when no request of the day has one.
        const priced = of.flatMap((x) => (x.cost === null ? [] : [x.cost]));
        return {
          date,
          requests: of.length,
          errors: of.filter((x) => x.status >= 400).length,
          billed_tokens: of.reduce((s, x) => s + Number(x.billedTokens), 0),
          cost: priced.length ? priced.reduce((a, b) => a.plus(b)).toFixed() : null,
          unpriced_requests: of.length - priced.length,
          users: new Set(of.map((x) => x.userId)).size,
        };
      }),
    );
  });
});
