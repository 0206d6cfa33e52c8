// The gateway on PostgreSQL + Redis, as N instances would run it.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { AccountService } from '../../server/accounts/service.ts';
import { openDatabase, type Database } from '../../server/db/client.ts';
import { randomToken } from '../../server/runtime/secrets.ts';
import { Browser } from '../helpers/browser.ts';
import { TEST_REDIS_URL, freshPostgres, minimalConfig, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

let pg: Awaited<ReturnType<typeof freshPostgres>>;
let a: TestGateway;
let b: TestGateway;
let operator: Database;

beforeAll(async () => {
  pg = await freshPostgres();
  // A prefix of this run's own: counters left in Redis by an earlier run (sign-in throttling lasts 15 minutes) do not count.
  const env = { DATABASE_URL: pg.url, REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: `mg-test-${randomToken(8)}:` };
  const config = `${minimalConfig}auth: { local: { allow_signup: true } }\n`;
  [a, b] = await Promise.all([startTestGateway({ env, config }), startTestGateway({ env, config })]);
  operator = await openDatabase({ databaseUrl: pg.url, dataDir: '/nonexistent', migrate: false });
});
afterAll(async () => {
  await Promise.all([a?.close(), b?.close(), operator?.close()]);
  await pg?.drop();
});

// An authenticated read: 200 with a valid key, 401 without.
const chat = (gw: TestGateway, key: string) => gw.fetch('/v1/usage', { key });

it('reports both stores in readyz', async () => {
  const body: any = await (await a.fetch('/readyz')).json();
  expect(body).toEqual({ status: 'ok', checks: { 'database (postgresql)': 'ok', 'counters (redis)': 'ok' } });
});

it('a key made on one instance authenticates on the other', async () => {
  const key = await a.newKey();
  expect((await chat(b, key)).status).toBe(200);
});

it('a key revoked elsewhere (another process, straight in the database) stops within the cache TTL', async () => {
  const key = await a.newKey();
  expect((await chat(a, key)).status).toBe(200);
  expect((await chat(b, key)).status).toBe(200);
  const accounts = new AccountService(operator.prisma, a.services.config);
  const row = (await accounts.listKeys()).find((k) => key.startsWith(k.prefix) && !k.revoked_at)!;
  await accounts.revokeKey(row.id);
  const started = Date.now();
  for (const gw of [a, b]) {
    while ((await chat(gw, key)).status !== 401) {
      expect(Date.now() - started).toBeLessThan(a.services.config.keyCacheTtlMs + 1000);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
});

it('a plan change reaches cached principals within the TTL', async () => {
  const key = await a.newKey('free');
  await chat(a, key);
  const principal = await a.services.keys.authenticate(key);
  expect(principal!.planId).toBe('free');
  await b.services.accounts.updateUser(principal!.userId, { plan: 'pro' });
  await new Promise((r) => setTimeout(r, a.services.config.keyCacheTtlMs + 50));
  expect((await a.services.keys.authenticate(key))!.planId).toBe('pro');
});

it('health history sums the attempts of every instance', async () => {
  a.services.health.record('gpt-4o-mini', 'openai', true, 120);
  a.services.health.record('gpt-4o-mini', 'openai', false, 900, 'http_503');
  b.services.health.record('gpt-4o-mini', 'openai', true, 80);
  await Promise.all([a.services.health.flush(), b.services.health.flush()]);
  const body: any = await (await a.fetch('/v1/models/status?model=gpt-4o-mini&window=1h')).json();
  expect(body.data[0]).toMatchObject({ requests: 3, errors: 1, last_error: 'http_503', latency_ms_p50: 175 });
});

it('password sign-in failures on one instance count on the other (the throttle lives in Redis)', async () => {
  const email = `victim-${randomToken(8).toLowerCase()}@example.com`;
  await new Browser(a.url).signUp(email);
  for (const gw of [a, b, a, b, a]) expect((await new Browser(gw.url).signIn(email, 'not the password')).status).toBe(401);
  const res = await new Browser(b.url).signIn(email, 'correct horse battery');
  expect(res.status).toBe(429);
  expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
});
