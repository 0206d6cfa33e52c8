// Limits are a boundary per user, not per key (issue 30): the plan's per-user limits hold over all
// of a user's API keys and connected apps together — exactly, under concurrency, on both counter
// stores — a replaced key gives no fresh day, keys are capped per plan, only the signed-in person
// manages keys, and the dashboard's session cannot call inference at all.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomToken } from '../../server/runtime/secrets.ts';
import { acquireJobSlot, releaseJobSlot } from '../../server/billing/job-slots.ts';
import { Browser } from '../helpers/browser.ts';
import { COST, COUNTER_STORES, EXACT_BODY, startBillingGateway } from '../helpers/billing-gateway.ts';
import { errorBody, quotaOf } from '../helpers/gateway.ts';
import { startOAuthGateway, type OAuthGateway } from '../helpers/oauth.ts';
import { clearOfMinuteEdge } from '../helpers/time.ts';

const N = 5;
const stores = COUNTER_STORES;

describe.each(stores)('%s counters', (_name, env) => {
  let b: Awaited<ReturnType<typeof startBillingGateway>>;
  beforeAll(async () => {
    // Each key alone could use far more than the user may: the user's limits bind.
    b = await startBillingGateway(
      { daily_tokens: 100 * COST, requests_per_minute: 1000, max_concurrent_jobs: 2, user_daily_tokens: N * COST, user_requests_per_minute: 1000, user_max_concurrent_jobs: 3, max_keys: 3 },
      { ...env },
    );
  });
  afterAll(() => b?.close());
  const chat = (key: string) => b.gw.fetch('/v1/chat/completions', { method: 'POST', key, json: EXACT_BODY });
  const user = async () => b.gw.services.accounts.createUser({ email: `u-${randomToken(8)}@example.com` });
  const keyOf = async (userId: string) => b.gw.services.accounts.createKey({ user: userId });

  it(`the user's day (${N} requests) is shared by the user's keys, exactly under concurrency; a replaced key gives no fresh day`, async () => {
    const u = await user();
    const [k1, k2] = [await keyOf(u.id), await keyOf(u.id)];
    const results = await Promise.all(Array.from({ length: 8 * N }, (_, i) => chat((i % 2 ? k1 : k2).key)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(N);
    const refused = results.filter((r) => r.status === 429);
    expect(refused).toHaveLength(7 * N);
    const e = await errorBody(refused[0]!);
    expect(e).toMatchObject({ type: 'rate_limit_error', code: 'daily_quota_exceeded', scope: 'user', limit: N * COST, remaining: 0 });
    expect(e.message).toBe(
      `Daily token quota exceeded: this request may use up to ${COST} tokens (after the model's multiplier), 0 of ${N * COST} remain across all your keys and connected apps on the 'basic' plan until 00:00 UTC.`,
    );
    // Each key's own counter holds only what went through it; together, the user's day.
    const q1 = await quotaOf(b.gw, k1.key);
    const q2 = await quotaOf(b.gw, k2.key);
    expect(q1.settled + q2.settled).toBe(N * COST);
    expect(q1.reserved + q2.reserved).toBe(0);

    // Revoke a key and make another: the day is still spent.
    await b.gw.services.accounts.revokeKey(k1.id);
    const k3 = await keyOf(u.id);
    const again = await chat(k3.key);
    expect(again.status).toBe(429);
    expect(await errorBody(again)).toMatchObject({ code: 'daily_quota_exceeded', scope: 'user' });
    const usage: any = await (await b.gw.fetch('/v1/usage', { key: k3.key })).json();
    expect(usage.limits.daily_tokens).toMatchObject({ limit: 100 * COST, used: 0, remaining: 100 * COST });
    expect(usage.limits.user.daily_tokens).toMatchObject({ limit: N * COST, used: N * COST, remaining: 0 });
    expect(usage.limits.user.keys).toEqual({ limit: 3, active: 2, remaining: 1 });
    expect(usage.plan).toMatchObject({ daily_tokens: 100 * COST, user_daily_tokens: N * COST, user_requests_per_minute: 1000, user_max_concurrent_jobs: 3, max_keys: 3 });
  });

  it('headers name the binding level: the user’s tokens when fewer are left there', async () => {
    const u = await user();
    const k = await keyOf(u.id);
    const res = await chat(k.key);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-limit-tokens')).toBe(String(N * COST));
    expect(res.headers.get('x-ratelimit-remaining-tokens')).toBe(String((N - 1) * COST));
    // The key's window and the user's are both 1000: the key's, the first of equals, is named.
    expect(res.headers.get('x-ratelimit-remaining-requests')).toBe('999');
  });

  it('job slots: 2 per key and 3 per user, taken in one step; a slot freed on either level is free again', async () => {
    const s = b.gw.services;
    const u = await user();
    const [a, c] = [await keyOf(u.id), await keyOf(u.id)];
    const pa = (await s.keys.authenticate(a.key))!;
    const pc = (await s.keys.authenticate(c.key))!;
    const take = (p: typeof pa, id: string) => acquireJobSlot(s, p, id, 60_000).then(() => 'ok', (err) => `${err.toBody().error.code}:${err.toBody().error.scope}`);
    expect(await Promise.all([take(pa, 'j1'), take(pa, 'j2'), take(pa, 'j3')])).toEqual(['ok', 'ok', 'too_many_active_jobs:key']);
    expect(await take(pc, 'j4')).toBe('ok');
    expect(await take(pc, 'j5')).toBe('too_many_active_jobs:user');
    const usage: any = await (await b.gw.fetch('/v1/usage', { key: c.key })).json();
    expect(usage.limits.concurrent_jobs).toEqual({ limit: 2, active: 1, remaining: 1 });
    expect(usage.limits.user.concurrent_jobs).toEqual({ limit: 3, active: 3, remaining: 0 });
    await releaseJobSlot(s, pa, 'j1');
    expect(await take(pc, 'j5')).toBe('ok');
  });

  it('max_keys: at most 3 active keys, exact when many are made at once; revoking one frees its place', async () => {
    const u = await user();
    const made = await Promise.allSettled(Array.from({ length: 10 }, () => keyOf(u.id)));
    expect(made.filter((r) => r.status === 'fulfilled')).toHaveLength(3);
    const refused = made.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(refused.reason.toBody().error).toMatchObject({ type: 'permission_error', code: 'too_many_keys' });
    const first = (made.find((r) => r.status === 'fulfilled') as PromiseFulfilledResult<{ id: string }>).value;
    await b.gw.services.accounts.revokeKey(first.id);
    await expect(keyOf(u.id)).resolves.toMatchObject({ key: expect.any(String) });
  });
});

it('the user’s requests per minute over three keys: exactly the limit of many concurrent requests, scope user', async () => {
  const b = await startBillingGateway({ daily_tokens: 1_000_000, requests_per_minute: 1000, user_requests_per_minute: 7 });
  try {
    await clearOfMinuteEdge(); // the requests and the window they are counted in
    const u = await b.gw.services.accounts.createUser({ email: 'rpm@example.com' });
    const keys = await Promise.all([0, 1, 2].map(() => b.gw.services.accounts.createKey({ user: u.id })));
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => b.gw.fetch('/v1/chat/completions', { method: 'POST', key: keys[i % 3]!.key, json: EXACT_BODY })));
    expect(results.filter((r) => r.status === 200)).toHaveLength(7);
    const refused = results.find((r) => r.status === 429)!;
    expect(await errorBody(refused)).toMatchObject({ code: 'rate_limit_exceeded', scope: 'user', limit: 7, remaining: 0, message: "Rate limit reached: 7 requests per minute across all your keys and connected apps on the 'basic' plan." });
    expect(refused.headers.get('x-ratelimit-limit-requests')).toBe('7');
    expect(refused.headers.get('x-ratelimit-remaining-requests')).toBe('0');
    // Another user is untouched.
    const other = await b.gw.newKey();
    expect((await b.gw.fetch('/v1/chat/completions', { method: 'POST', key: other, json: EXACT_BODY })).status).toBe(200);
  } finally {
    await b.close();
  }
});

describe('OAuth grants count toward their user', () => {
  const LIMIT = 1200;
  let t: OAuthGateway;
  beforeAll(async () => {
    t = await startOAuthGateway('', undefined, `\n  - { id: free, rank: 0, daily_tokens: 1000000, requests_per_minute: 1000, user_daily_tokens: ${LIMIT} }\n  - { id: pro, rank: 1, daily_tokens: 1000000, requests_per_minute: 1000 }`);
  });
  afterAll(() => t?.close());

  it('an app’s access token, its api_key and the user’s own key draw on one day', async () => {
    const user = new Browser(t.gw.url);
    await user.signUp('granted@example.com');
    const userId = (await t.gw.services.db.prisma.user.findUniqueOrThrow({ where: { email: 'granted@example.com' } })).id;
    const own = (await t.gw.services.accounts.createKey({ user: userId })).key;
    const app = await t.registerApp();
    const a = await t.authorize(app, user);
    const tokens = await t.exchange(app, a.params, a.verifier);
    const apiKey = ((await (await t.me(tokens.access_token)).json()) as { api_key: string }).api_key;
    // 'hi' is 1 token by the estimate, so each request reserves 1 + 16.
    const status = async (credential: string) => {
      const res = await t.gw.fetch('/v1/chat/completions', { method: 'POST', key: credential, json: { model: 'openai-text', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] } });
      await res.arrayBuffer();
      return res.status;
    };
    const used = async () => ((await (await t.gw.fetch('/v1/usage', { key: own })).json()) as any).limits.user.daily_tokens.used as number;
    // The recorded answer reports 379 tokens (the fake ignores max_tokens). The user's day (1200)
    // admits a request while what it holds plus the reservation fits: after 3 requests
    // (1137 + 17 ≤ 1200) a fourth, after 4 (1516) none.
    expect(await status(own)).toBe(200);
    expect(await used()).toBe(379);
    const statuses: number[] = [];
    for (const credential of [tokens.access_token, apiKey, own, tokens.access_token, apiKey]) statuses.push(await status(credential));
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    expect(await used()).toBe(4 * 379);
    const refused = await t.gw.fetch('/v1/chat/completions', { method: 'POST', key: apiKey, json: { model: 'openai-text', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] } });
    expect(await errorBody(refused)).toMatchObject({ code: 'daily_quota_exceeded', scope: 'user', limit: LIMIT, remaining: 0 });
  });
});
