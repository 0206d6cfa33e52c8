// Redis and PostgreSQL going away under a running gateway (issue 15, "Counter store outages"): each
// store sits behind a TCP proxy the test cuts. The gateway must answer fast and clearly (503 with a
// code naming the store and Retry-After), never let a request through unmetered, never hang, and
// come back by itself with the ledger and the quota counters agreeing to the token.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomToken } from '../../server/runtime/secrets.ts';
import { quotaKey } from '../../server/billing/plans.ts';
import { COST, EXACT_BODY, billingConfig } from '../helpers/billing-gateway.ts';
import { startFakeUpstreams, type FakeUpstreams } from '../helpers/fake-upstreams.ts';
import { TEST_DATABASE_URL, TEST_REDIS_URL, errorBody, freshPostgres, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.ts';

const COMMAND_TIMEOUT_MS = 1000;
const QUERY_TIMEOUT_MS = 2000;
const adminToken = `mga-${randomToken(30)}`;
// An upstream that answers after 300 ms: long enough to cut a store while requests are in flight.
const DELAYED_BODY = { ...EXACT_BODY, model: 'exact-delayed' };

let fake: FakeUpstreams;
let db: Awaited<ReturnType<typeof freshPostgres>>;
let redisProxy: TcpProxy;
let pgProxy: TcpProxy;
let gw: TestGateway;
let operator: pg.Client;

beforeAll(async () => {
  fake = await startFakeUpstreams();
  db = await freshPostgres();
  const redisTarget = new URL(TEST_REDIS_URL);
  const pgTarget = new URL(TEST_DATABASE_URL);
  redisProxy = await startTcpProxy({ host: redisTarget.hostname, port: Number(redisTarget.port || 6379) });
  pgProxy = await startTcpProxy({ host: pgTarget.hostname, port: Number(pgTarget.port || 5432) });
  const config = billingConfig(fake.url, { daily_tokens: 1_000_000, requests_per_minute: 100_000 });
  gw = await startTestGateway({
    config: config.replace('models:\n', 'models:\n  - { id: exact-delayed, endpoint: chat, token_multiplier: 2, upstreams: [{ provider: openai, model: exact-delayed-model }] }\n'),
    env: {
      DATABASE_URL: pgProxy.url(db.url),
      REDIS_URL: redisProxy.url(TEST_REDIS_URL),
      REDIS_KEY_PREFIX: `mg-outage-${randomToken(8)}:`,
      GATEWAY_ADMIN_TOKEN: adminToken,
      LEDGER_FLUSH_MS: '200',
      REDIS_COMMAND_TIMEOUT_MS: String(COMMAND_TIMEOUT_MS),
      DATABASE_QUERY_TIMEOUT_MS: String(QUERY_TIMEOUT_MS),
    },
  });
  // The test's own look at the database, not through the proxy.
  operator = new pg.Client({ connectionString: db.url });
  await operator.connect();
}, 60_000);

afterAll(async () => {
  redisProxy?.resume();
  pgProxy?.resume();
  await gw?.close();
  await operator?.end();
  await Promise.all([fake?.close(), redisProxy?.close(), pgProxy?.close()]);
  await db?.drop();
});

const chat = (key: string, body: object = EXACT_BODY) => gw.fetch('/v1/chat/completions', { method: 'POST', key, json: body });

async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await fn();
  return { value, ms: Math.round(performance.now() - started) };
}

/** Time until `fn` answers `status` (polled), failing after `withinMs`. */
async function until(fn: () => Promise<Response>, status: number, withinMs: number): Promise<number> {
  const started = performance.now();
  for (;;) {
    const res = await fn();
    await res.arrayBuffer();
    if (res.status === status) return Math.round(performance.now() - started);
    if (performance.now() - started > withinMs) throw new Error(`still ${res.status} after ${withinMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Waits until the fake upstream has received `n` requests in all. */
async function upstreamReached(n: number) {
  while (fake.requests.length < n) await new Promise((r) => setTimeout(r, 5));
}

/** A key the gateway has authenticated (cached), and its id. */
async function cachedKey(): Promise<{ key: string; keyId: string }> {
  const key = await gw.newKey();
  const principal = (await gw.services.keys.authenticate(key))!;
  userOf.set(principal.keyId, principal.userId);
  return { key, keyId: principal.keyId };
}
/** The user of each key cachedKey made: its counters carry the user's hash tag. */
const userOf = new Map<string, string>();

async function ledgerSum(keyId: string): Promise<{ tokens: number; count: number }> {
  const { rows } = await operator.query('SELECT coalesce(sum(billed_tokens), 0)::int AS tokens, count(*)::int AS count FROM usage_records WHERE api_key_id = $1', [keyId]);
  return rows[0];
}

/** Waits until the ledger holds `count` records of `keyId` and the quota counter agrees with it: settled = ledger, nothing held. */
async function ledgerAndCountersAgree(keyId: string, count: number, withinMs = 8000) {
  const started = performance.now();
  let last: unknown;
  for (;;) {
    const ledger = await ledgerSum(keyId);
    const now = Date.now();
    const counter = await gw.services.counters.reserved(quotaKey({ userId: userOf.get(keyId)!, keyId }, now), now).catch(() => null);
    last = { ledger, counter };
    if (ledger.count === count && counter && counter.reserved === 0 && counter.settled === ledger.tokens) return { ledger, counter };
    if (performance.now() - started > withinMs) throw new Error(`ledger and counters disagree: ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function expectUnavailable(res: Response, error: { type: string; code: string; message: string }, code: string) {
  expect(res.status).toBe(503);
  expect(error).toMatchObject({ type: 'server_error', code });
  expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
}

describe('Redis outage', () => {
  it('refused: chat answers 503 counter_store_unavailable with Retry-After at once, and nothing reaches the upstream', async () => {
    const { key } = await cachedKey();
    expect((await chat(key)).status).toBe(200);
    redisProxy.refuse();
    redisProxy.drop();
    try {
      const upstreamBefore = fake.requests.length;
      for (let i = 0; i < 3; i++) {
        const { value: res, ms } = await timed(() => chat(key));
        const e = await errorBody(res);
        expectUnavailable(res, e, 'counter_store_unavailable');
        expect(e.message).toMatch(/rate-limit and quota store/i);
        expect(ms).toBeLessThan(1500);
        console.log(`redis refused: 503 in ${ms} ms`);
      }
      expect(fake.requests.length).toBe(upstreamBefore);

      const usage = await gw.fetch('/v1/usage', { key });
      expectUnavailable(usage, await errorBody(usage), 'counter_store_unavailable');

      const { value: ready, ms } = await timed(() => gw.fetch('/readyz'));
      expect(ready.status).toBe(503);
      const body: any = await ready.json();
      expect(body.checks['counters (redis)']).toMatch(/^unavailable/);
      expect(body.checks['database (postgresql)']).toBe('ok');
      expect(ms).toBeLessThan(2500);
    } finally {
      redisProxy.resume();
    }
    const recovery = await until(() => chat(key), 200, 5000);
    console.log(`redis refused: recovered ${recovery} ms after resume`);
  });

  it('stalled: chat answers 503 within the command timeout, not a hang; the admission Redis ran late holds nothing', async () => {
    const { key, keyId } = await cachedKey();
    expect((await chat(key)).status).toBe(200);
    redisProxy.stall();
    try {
      const upstreamBefore = fake.requests.length;
      const { value: res, ms } = await timed(() => chat(key));
      expectUnavailable(res, await errorBody(res), 'counter_store_unavailable');
      expect(ms).toBeLessThan(COMMAND_TIMEOUT_MS + 700);
      console.log(`redis stalled: 503 in ${ms} ms`);
      expect(fake.requests.length).toBe(upstreamBefore);
    } finally {
      redisProxy.resume();
    }
    const recovery = await until(() => chat(key), 200, 5000);
    console.log(`redis stalled: recovered ${recovery} ms after resume`);
    // The refused request's admission reached Redis at the resume: its reservation is released,
    // so the key is charged for its two answered requests only.
    await ledgerAndCountersAgree(keyId, 2);
  });

  it('requests admitted before Redis went away are answered, and their settlement lands once: the ledger and the quota counter agree', async () => {
    const { key, keyId } = await cachedKey();
    const N = 6;
    const upstreamBefore = fake.requests.length;
    const inFlight = Array.from({ length: N }, () => chat(key, DELAYED_BODY));
    await upstreamReached(upstreamBefore + N); // admitted, waiting on the 300 ms upstream
    redisProxy.refuse();
    redisProxy.drop();
    const statuses = await Promise.all(inFlight.map(async (r) => (await r).status));
    expect(statuses).toEqual(Array(N).fill(200));
    await new Promise((r) => setTimeout(r, 500));
    redisProxy.resume();
    const { ledger, counter } = await ledgerAndCountersAgree(keyId, N);
    expect(ledger.tokens).toBe(N * COST);
    expect(counter.settled).toBe(N * COST);
  });

  it('a settlement stuck in a stalled Redis (maybe applied, maybe not) is neither lost nor counted twice', async () => {
    const { key, keyId } = await cachedKey();
    const N = 4;
    const upstreamBefore = fake.requests.length;
    const inFlight = Array.from({ length: N }, () => chat(key, DELAYED_BODY));
    await upstreamReached(upstreamBefore + N);
    redisProxy.stall();
    const statuses = await Promise.all(inFlight.map(async (r) => (await r).status));
    expect(statuses).toEqual(Array(N).fill(200));
    // The settlements time out; the bytes held by the stall reach Redis at the resume.
    await new Promise((r) => setTimeout(r, COMMAND_TIMEOUT_MS + 500));
    redisProxy.resume();
    const { ledger, counter } = await ledgerAndCountersAgree(keyId, N);
    expect(ledger.tokens).toBe(N * COST);
    expect(counter.settled).toBe(N * COST);
  });
});

describe('PostgreSQL outage', () => {
  it('refused: an uncached key gets 503 database_unavailable at once; /v1/usage and the admin API 503; a cached key is still served and its ledger record lands afterwards', async () => {
    const { key: cached, keyId } = await cachedKey();
    const uncached = await gw.newKey();
    gw.services.keys.invalidateAll();
    expect((await chat(cached)).status).toBe(200); // back in the cache
    await gw.services.ledger.flush();
    const before = await ledgerSum(keyId);
    expect(before.count).toBe(1);
    pgProxy.refuse();
    pgProxy.drop();
    try {
      const { value: res, ms } = await timed(() => chat(uncached));
      const e = await errorBody(res);
      expectUnavailable(res, e, 'database_unavailable');
      expect(e.message).toMatch(/database/i);
      expect(ms).toBeLessThan(1500);
      console.log(`postgres refused: uncached key 503 in ${ms} ms`);

      const usage = await timed(() => gw.fetch('/v1/usage', { key: cached }));
      expectUnavailable(usage.value, await errorBody(usage.value), 'database_unavailable');
      expect(usage.ms).toBeLessThan(3000);

      const admin = await gw.fetch('/admin/v1/users', { headers: { authorization: `Bearer ${adminToken}` } });
      expectUnavailable(admin, await errorBody(admin), 'database_unavailable');

      // OAuth's protocol endpoints answer in RFC 6749 form: temporarily_unavailable, still 503.
      const token = await gw.fetch('/v1/oauth/token', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=refresh_token&refresh_token=x&client_id=app_x&client_secret=s',
      });
      expect(token.status).toBe(503);
      expect(Number(token.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(((await token.json()) as any).error).toBe('temporarily_unavailable');

      const ready = await gw.fetch('/readyz');
      expect(ready.status).toBe(503);
      expect(((await ready.json()) as any).checks['database (postgresql)']).toMatch(/^unavailable/);

      // Redis is up and the key is cached: inference goes on, its record waits for the database.
      const served = await chat(cached);
      expect(served.status).toBe(200);
      await new Promise((r) => setTimeout(r, 600));
      expect(await ledgerSum(keyId)).toEqual(before);
    } finally {
      pgProxy.resume();
    }
    const recovery = await until(() => chat(uncached), 200, 5000);
    console.log(`postgres refused: recovered ${recovery} ms after resume`);
    await ledgerAndCountersAgree(keyId, before.count + 1, 10_000);
  });

  it('stalled: an uncached key gets 503 database_unavailable within the timeouts, not a hang', async () => {
    const uncached = await gw.newKey();
    const { key: cached } = await cachedKey();
    pgProxy.stall();
    try {
      const { value: res, ms } = await timed(() => chat(uncached));
      expectUnavailable(res, await errorBody(res), 'database_unavailable');
      expect(ms).toBeLessThan(QUERY_TIMEOUT_MS + 1000);
      console.log(`postgres stalled: uncached key 503 in ${ms} ms`);
      const usage = await timed(() => gw.fetch('/v1/usage', { key: cached }));
      expectUnavailable(usage.value, await errorBody(usage.value), 'database_unavailable');
      expect(usage.ms).toBeLessThan(2 * QUERY_TIMEOUT_MS + 1000);
      console.log(`postgres stalled: /v1/usage 503 in ${usage.ms} ms`);
    } finally {
      pgProxy.resume();
    }
    const recovery = await until(() => chat(uncached), 200, 8000);
    console.log(`postgres stalled: recovered ${recovery} ms after resume`);
  });
});
