// Three gateway processes sharing PostgreSQL and Redis enforce the limits one process would.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { randomToken } from '../../server/runtime/secrets.ts';
import { COST, EXACT_BODY, billingConfig } from '../helpers/billing-gateway.ts';
import { startFakeUpstreams, type FakeUpstreams } from '../helpers/fake-upstreams.ts';
import { TEST_REDIS_URL, freshPostgres } from '../helpers/gateway.ts';
import { clearOfMinuteEdge } from '../helpers/time.ts';

const N = 6;
const bin = new URL('../../bin/model-gateway.mjs', import.meta.url).pathname;
let fake: FakeUpstreams;
let db: Awaited<ReturnType<typeof freshPostgres>>;
const procs: { child: ChildProcess; dir: string; url: string }[] = [];
const adminToken = `mga-${randomToken(30)}`;

beforeAll(async () => {
  fake = await startFakeUpstreams();
  db = await freshPostgres();
  const work = mkdtempSync(path.join(tmpdir(), 'mg-multi-'));
  const config = path.join(work, 'gateway.config.yaml');
  // Per key N requests a day and 4N a minute; per user (over all their keys) 2N a day and 6N a minute.
  writeFileSync(config, billingConfig(fake.url, { daily_tokens: N * COST, requests_per_minute: 4 * N, user_daily_tokens: 2 * N * COST, user_requests_per_minute: 6 * N }));
  const env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    GATEWAY_METADATA_FETCH: 'off',
    DATABASE_URL: db.url,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_KEY_PREFIX: `mgtest:${randomToken(6)}:`,
    GATEWAY_CONFIG: config,
    GATEWAY_ADMIN_TOKEN: adminToken,
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'warn',
  };
  await Promise.all(
    [0, 1, 2].map(async (i) => {
      const dir = path.join(work, `instance-${i}`);
      const child = spawn(process.execPath, [bin, 'serve'], { env: { ...env, DATA_DIR: dir }, stdio: ['ignore', 'ignore', 'pipe'] });
      let log = '';
      child.stderr!.on('data', (d) => (log += d));
      const info = path.join(dir, 'server.json');
      for (let n = 0; n < 300 && !existsSync(info); n++) await new Promise((r) => setTimeout(r, 100));
      if (!existsSync(info)) throw new Error(`instance ${i} did not start: ${log}`);
      procs.push({ child, dir, url: JSON.parse(readFileSync(info, 'utf8')).url });
    }),
  );
}, 60_000);

afterAll(async () => {
  for (const p of procs) p.child.kill('SIGKILL');
  await fake?.close();
  await db?.drop();
});

/** A new user with `n` keys, made through the admin API of different instances. */
async function newKeys(n = 1): Promise<string[]> {
  const h = { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' };
  const email = `multi-${randomToken(6)}@example.com`;
  await fetch(`${procs[0]!.url}/admin/v1/users`, { method: 'POST', headers: h, body: JSON.stringify({ email }) });
  const keys: string[] = [];
  for (let i = 0; i < n; i++) {
    const key = (await (await fetch(`${procs[(i + 1) % 3]!.url}/admin/v1/keys`, { method: 'POST', headers: h, body: JSON.stringify({ user: email }) })).json()) as { key: string };
    keys.push(key.key);
  }
  return keys;
}
const newKey = async () => (await newKeys(1))[0]!;

const chat = (i: number, key: string) =>
  fetch(`${procs[i % 3]!.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(EXACT_BODY) });

it(`${10 * N} requests over three instances: exactly ${4 * N} pass the minute window, exactly ${N} the daily quota, and the ledger sums to it`, async () => {
  const key = await newKey();
  const results = await Promise.all(Array.from({ length: 10 * N }, (_, i) => chat(i, key)));
  const statuses = results.map((r) => r.status);
  expect(statuses.filter((s) => s === 200)).toHaveLength(N);
  expect(statuses.filter((s) => s === 429)).toHaveLength(9 * N);
  // The minute window (4N requests) and the quota (N) were both enforced across the instances.
  const codes = await Promise.all(results.filter((r) => r.status === 429).map(async (r) => ((await r.json()) as any).error.code));
  expect(codes.filter((c) => c === 'rate_limit_exceeded')).toHaveLength(10 * N - 4 * N);
  expect(codes.filter((c) => c === 'daily_quota_exceeded')).toHaveLength(4 * N - N);
}, 60_000);

it(`one user's three keys over three instances: exactly ${6 * N} requests pass the user's minute, exactly ${2 * N} the user's day`, async () => {
  await clearOfMinuteEdge(); // the requests and the window they are counted in
  const keys = await newKeys(3);
  // 12N requests, 4N through each key (each key's own minute holds them all), spread over the instances.
  const results = await Promise.all(Array.from({ length: 12 * N }, (_, i) => chat(i, keys[Math.floor(i / 3) % 3]!)));
  expect(results.filter((r) => r.status === 200)).toHaveLength(2 * N);
  const errors = await Promise.all(results.filter((r) => r.status === 429).map(async (r) => ((await r.json()) as any).error));
  expect(errors.filter((e) => e.code === 'rate_limit_exceeded' && e.scope === 'user')).toHaveLength(12 * N - 6 * N);
  expect(errors.filter((e) => e.code === 'daily_quota_exceeded')).toHaveLength(6 * N - 2 * N);
  const usage = (await (await fetch(`${procs[2]!.url}/v1/usage`, { headers: { authorization: `Bearer ${keys[0]}` } })).json()) as any;
  expect(usage.limits.user.daily_tokens).toMatchObject({ limit: 2 * N * COST, used: 2 * N * COST, remaining: 0 });
  expect(usage.limits.user.requests_per_minute).toMatchObject({ limit: 6 * N, used: 6 * N, remaining: 0 });
}, 60_000);

it('the ledgers of every instance, flushed at a graceful stop, sum to what was admitted', async () => {
  // Graceful stop flushes every instance's ledger.
  await Promise.all(procs.map((p) => new Promise<void>((resolve) => {
    p.child.once('exit', () => resolve());
    p.child.kill('SIGTERM');
  })));
  const c = new pg.Client({ connectionString: db.url });
  await c.connect();
  const { rows } = await c.query('SELECT count(*)::int AS n, sum(billed_tokens)::int AS billed FROM usage_records');
  // The daily sums every usage read reads, added by three instances' writes at once: the same.
  const sums = await c.query('SELECT sum(requests)::int AS n, sum(billed_tokens)::int AS billed FROM usage_daily');
  const perKey = (table: string, requests: string) =>
    c.query(`SELECT api_key_id, ${requests}::int AS n, sum(billed_tokens)::int AS billed, sum(prompt_tokens)::int AS prompt FROM ${table} GROUP BY 1 ORDER BY 1`);
  const [raw, daily] = [await perKey('usage_records', 'count(*)'), await perKey('usage_daily', 'sum(requests)')];
  await c.end();
  expect(rows[0]).toEqual({ n: N + 2 * N, billed: (N + 2 * N) * COST });
  expect(sums.rows[0]).toEqual(rows[0]);
  expect(daily.rows).toEqual(raw.rows);
}, 60_000);
