// Spend budgets: held at the most a request can cost, settled to its exact cost, enforced atomically
// on one instance and on two sharing Redis (oversubscribed tenfold: not one cent over).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomToken } from '../../server/runtime/secrets.ts';
import { EXACT_BODY } from '../helpers/billing-gateway.ts';
import { startFakeUpstreams, type FakeUpstreams } from '../helpers/fake-upstreams.ts';
import { TEST_REDIS_URL, errorBody, freshPostgres, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

// EXACT_BODY reserves and uses 10 prompt and 20 completion tokens: at these prices
// 10 × 0.000001 + 20 × 0.000002 = $0.00005, held and spent alike.
const REQUEST_USD = '0.00005';
const BUDGET_REQUESTS = 10;

function config(fake: string, extra = ''): string {
  return `
providers:
  - { id: openai, type: openai, base_url: "${fake}/v1", api_key: k }
models:
  - { id: exact, endpoint: chat, upstreams: [{ provider: openai, model: exact-model }], pricing: { prompt: "0.000001", completion: "0.000002" } }
  - { id: unpriced, endpoint: chat, upstreams: [{ provider: openai, model: exact-model }] }
plans:
  - { id: budgeted, rank: 0, daily_tokens: 100000000, requests_per_minute: 100000, daily_budget_usd: "0.0005", monthly_budget_usd: "0.0008" }
  - { id: shared, rank: 1, daily_tokens: 100000000, requests_per_minute: 100000, user_daily_budget_usd: "0.0005" }
default_plan: budgeted
key_cache_ttl_ms: 60000
${extra}
`;
}

const chat = (gw: TestGateway, key: string, model = 'exact') => gw.fetch('/v1/chat/completions', { method: 'POST', key, json: { ...EXACT_BODY, model } });

/** Fires `n` requests at once over `gateways` (round robin) and counts the statuses. */
async function burst(gateways: TestGateway[], keys: string[], n: number) {
  const answers = await Promise.all(Array.from({ length: n }, (_, i) => chat(gateways[i % gateways.length]!, keys[i % keys.length]!)));
  const statuses = answers.map((r) => r.status);
  const refused = answers.find((r) => r.status === 429);
  return { ok: statuses.filter((s) => s === 200).length, refused: statuses.filter((s) => s === 429).length, others: statuses.filter((s) => s !== 200 && s !== 429), refusal: refused ? await errorBody(refused) : null };
}

const ADMIN = `mga-${randomToken(30)}`;

describe('on one instance', () => {
  let fake: FakeUpstreams;
  let gw: TestGateway;
  beforeAll(async () => {
    fake = await startFakeUpstreams();
    gw = await startTestGateway({ config: config(fake.url), env: { GATEWAY_ADMIN_TOKEN: ADMIN } });
  });
  const admin = (method: string, path: string, json: unknown) => gw.fetch(path, { method, key: ADMIN, json });
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
  });

  it(`a key's daily budget of ${BUDGET_REQUESTS} requests' cost, oversubscribed tenfold: exactly ${BUDGET_REQUESTS} pass, not one cent over`, async () => {
    const key = await gw.newKey();
    const r = await burst([gw], [key], 10 * BUDGET_REQUESTS);
    expect(r).toMatchObject({ ok: BUDGET_REQUESTS, refused: 9 * BUDGET_REQUESTS, others: [] });
    expect(r.refusal).toMatchObject({
      type: 'rate_limit_error',
      code: 'budget_exceeded',
      limit_usd: '0.0005',
      period: 'daily',
      scope: 'key',
    });
    const usage: any = await (await gw.fetch('/v1/usage', { key })).json();
    expect(usage.budgets.key.daily).toMatchObject({ limit_usd: '0.0005', spent_usd: '0.0005', remaining_usd: '0' });
    expect(usage.budgets.key.monthly).toMatchObject({ limit_usd: '0.0008', spent_usd: '0.0005', remaining_usd: '0.0003' });
    expect(usage.budgets.user).toEqual({ daily: null, monthly: null });
    expect(usage.totals).toMatchObject({ requests: BUDGET_REQUESTS, cost: '0.0005', unpriced_requests: 0 });
    expect(usage.by_model).toEqual([expect.objectContaining({ model: 'exact', cost: '0.0005' })]);
    expect(usage.by_day.at(-1).models).toEqual([expect.objectContaining({ model: 'exact', requests: BUDGET_REQUESTS, billed_tokens: 30 * BUDGET_REQUESTS, cost: '0.0005', unpriced_requests: 0 })]);
    expect(usage.plan).toMatchObject({ daily_budget_usd: '0.0005', monthly_budget_usd: '0.0008', user_daily_budget_usd: null, user_monthly_budget_usd: null });
  });

  it('each ledger row carries its exact cost', async () => {
    const key = await gw.newKey();
    const res = await chat(gw, key);
    expect(res.status).toBe(200);
    await gw.services.ledger.flush();
    const [row] = await gw.services.db.sql.query(`SELECT cost::text AS cost, prompt_tokens, completion_tokens FROM usage_records WHERE request_id = $1`, [res.headers.get('x-request-id')]);
    expect(row).toEqual({ cost: REQUEST_USD, prompt_tokens: 10, completion_tokens: 20 });
  });

  it('a model without a known price is refused under a budget, and says what the operator can do', async () => {
    const res = await chat(gw, await gw.newKey(), 'unpriced');
    expect(res.status).toBe(403);
    const body = await errorBody(res);
    expect(body).toMatchObject({ type: 'permission_error', code: 'model_price_unknown', param: 'model' });
    expect(body.message).toContain('budget_unpriced_models: allow');
  });

  it("a key's own cap holds beside the plan's budget (the lower binds), and is removed with null", async () => {
    const key = await gw.newKey();
    const keyId = (await gw.services.keys.authenticate(key))!.keyId;
    const set = await admin('PATCH', `/admin/v1/keys/${keyId}`, { daily_budget_usd: '0.0001' });
    expect(set.status).toBe(200);
    expect(await set.json()).toMatchObject({ id: keyId, daily_budget_usd: '0.0001', monthly_budget_usd: null });
    // Two requests' cost, then refused on the key's own cap.
    expect(await burst([gw], [key], 5)).toMatchObject({ ok: 2, refused: 3, refusal: { code: 'budget_exceeded', limit_usd: '0.0001', scope: 'key' } });
    const usage: any = await (await gw.fetch('/v1/usage', { key })).json();
    expect(usage.budgets.key.daily).toMatchObject({ limit_usd: '0.0001', spent_usd: '0.0001', remaining_usd: '0' });
    // A cap above the plan's budget does not loosen it: the plan's 0.0005 binds.
    await admin('PATCH', `/admin/v1/keys/${keyId}`, { daily_budget_usd: '100' });
    expect(((await (await gw.fetch('/v1/usage', { key })).json()) as any).budgets.key.daily.limit_usd).toBe('0.0005');
    const cleared = await admin('PATCH', `/admin/v1/keys/${keyId}`, { daily_budget_usd: null });
    expect(await cleared.json()).toMatchObject({ daily_budget_usd: null });
    // Neither a budget below the smallest unit nor a negative one, nor an empty change.
    for (const body of [{ daily_budget_usd: '-1' }, { daily_budget_usd: '0' }, { daily_budget_usd: '0.0000000001' }, {}]) {
      const bad = await admin('PATCH', `/admin/v1/keys/${keyId}`, body);
      expect(bad.status).toBe(400);
      expect(await errorBody(bad)).toMatchObject({ type: 'invalid_request_error' });
    }
  });

  it("a user's own budget replaces the plan's user budget", async () => {
    const user = await gw.services.accounts.createUser({ email: `own-${randomToken(6)}@example.com`, plan: 'shared' });
    const key = (await gw.services.accounts.createKey({ user: user.id })).key;
    const set = await admin('PATCH', `/admin/v1/users/${user.id}`, { daily_budget_usd: '0.00015' });
    expect(await set.json()).toMatchObject({ id: user.id, plan: 'shared', daily_budget_usd: '0.00015', monthly_budget_usd: null });
    expect(await burst([gw], [key], 6)).toMatchObject({ ok: 3, refused: 3, refusal: { code: 'budget_exceeded', scope: 'user', limit_usd: '0.00015' } });
    const usage: any = await (await gw.fetch('/v1/usage', { key })).json();
    expect(usage.budgets.user.daily).toMatchObject({ limit_usd: '0.00015', spent_usd: '0.00015' });
  });

  it("with budget_unpriced_models: allow, an unpriced model passes at no cost against the budget, its cost unknown", async () => {
    const other = await startTestGateway({ config: config(fake.url, 'budget_unpriced_models: allow') });
    try {
      const key = await other.newKey();
      expect((await chat(other, key, 'unpriced')).status).toBe(200);
      const usage: any = await (await other.fetch('/v1/usage', { key })).json();
      expect(usage.totals).toMatchObject({ requests: 1, cost: null, unpriced_requests: 1 });
      expect(usage.budgets.key.daily).toMatchObject({ spent_usd: '0', remaining_usd: '0.0005' });
    } finally {
      await other.close();
    }
  });
});

describe('two instances sharing PostgreSQL and Redis', () => {
  let fake: FakeUpstreams;
  let db: Awaited<ReturnType<typeof freshPostgres>>;
  const gateways: TestGateway[] = [];
  beforeAll(async () => {
    fake = await startFakeUpstreams();
    db = await freshPostgres();
    const env = { DATABASE_URL: db.url, REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: `mgtest:${randomToken(6)}:` };
    gateways.push(await startTestGateway({ config: config(fake.url), env }));
    gateways.push(await startTestGateway({ config: config(fake.url), env }));
  }, 60_000);
  afterAll(async () => {
    for (const gw of gateways.splice(0)) await gw.close();
    await fake?.close();
    await db?.drop();
  });

  it(`a key's budget, oversubscribed tenfold over both: exactly ${BUDGET_REQUESTS} pass`, async () => {
    const key = await gateways[0]!.newKey();
    const r = await burst(gateways, [key], 10 * BUDGET_REQUESTS);
    expect(r).toMatchObject({ ok: BUDGET_REQUESTS, refused: 9 * BUDGET_REQUESTS, others: [] });
    // Each instance's ledger rows reach the database before the report reads them.
    await gateways[0]!.services.ledger.flush();
    const usage: any = await (await gateways[1]!.fetch('/v1/usage', { key })).json();
    expect(usage.totals).toMatchObject({ requests: BUDGET_REQUESTS, errors: 0, cost: '0.0005', unpriced_requests: 0 });
    expect(usage.budgets.key.daily).toMatchObject({ spent_usd: '0.0005', remaining_usd: '0' });
  });

  it(`a user's budget over two keys and both instances: exactly ${BUDGET_REQUESTS} pass`, async () => {
    const user = await gateways[0]!.services.accounts.createUser({ email: `budget-${randomToken(6)}@example.com`, plan: 'shared' });
    const keys = [(await gateways[0]!.services.accounts.createKey({ user: user.id })).key, (await gateways[1]!.services.accounts.createKey({ user: user.id })).key];
    const r = await burst(gateways, keys, 10 * BUDGET_REQUESTS);
    expect(r).toMatchObject({ ok: BUDGET_REQUESTS, refused: 9 * BUDGET_REQUESTS, others: [] });
    expect(r.refusal).toMatchObject({ code: 'budget_exceeded', scope: 'user', limit_usd: '0.0005', remaining_usd: '0' });
    const usage: any = await (await gateways[1]!.fetch('/v1/usage', { key: keys[0]! })).json();
    expect(usage.budgets.user.daily).toMatchObject({ limit_usd: '0.0005', spent_usd: '0.0005', remaining_usd: '0' });
  });
});
