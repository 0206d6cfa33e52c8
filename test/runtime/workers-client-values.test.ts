// What the issue 42 audit broke, replayed on two workers through the real CLI (`serve --workers 2`
// on a fresh PostgreSQL database and Redis, over the fake upstreams), and the books checked after:
//
// - Client values never become the gateway's keys (decision 0034). A 4,000-letter `X-Request-Id`
//   is refused (400 invalid_request_id) — it used to become the ledger row's key and make every later
//   ledger batch fail. 200 concurrent requests sharing `X-Request-Id: dup-2`, spread over both
//   workers, are 200 requests: 200 gateway ids, 200 ledger rows, 200 request-log records each
//   joined to its own usage — they used to keep 46 ledger rows (`ON CONFLICT DO NOTHING` on the
//   shared id) and join every log record to whichever row won. A NUL in a model name, in a Gemini
//   path or a chat body, is a 400 — it used to reach the request log and fail every later batch.
// - After all that, every book agrees with what was answered, for the key that sent it: the 200
//   answers == its usage_records rows == sum(usage_daily.requests); its daily token counter in
//   Redis (GET /v1/usage) == sum(usage_records.billed_tokens) == sum(usage_daily.billed_tokens);
//   its request-log records are every inference request it sent (the NUL refusals too), each 200
//   joined to its own usage, each 400 to none; neither batch writer logged a failure.
// - Across a graceful restart (SIGTERM to the primary, the same database and DATA_DIR) the books
//   are unchanged, and a dead process's segment file holding what a 4,000-letter id left before
//   the fix, and a record whose token count overflows an integer column, does not stop the start:
//   /readyz answers 200, the first record is written once (its id cut to 128 characters, the last
//   an ellipsis) and counted once in usage_daily (one of the two workers claims the segment), the
//   second is set aside in DATA_DIR/ledger/rejected/, and both restarted workers serve and bill.
//
// The synthetic records use an api key id of their own, so the real key's books stay exact.
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { LedgerRecord } from '../../server/billing/ledger.ts';
import { randomToken } from '../../server/runtime/secrets.ts';
import { startFakeUpstreams, type FakeUpstreams } from '../helpers/fake-upstreams.ts';
import { TEST_REDIS_URL, freshPostgres } from '../helpers/gateway.ts';
import { baseEnv, chat, postOnce, shutdownTestConfig, spawnServe, type Answer, type CliGateway } from '../helpers/cli-gateway.ts';

const DUPS = 200;
const PLAIN = 10;
const SYNTHETIC_KEY = `key_i42_synthetic_${randomToken(6)}`;

let fake: FakeUpstreams;
let db: Awaited<ReturnType<typeof freshPostgres>>;
let sql: pg.Client;
let work: string;
let env: NodeJS.ProcessEnv;
let gw: CliGateway;
const started: CliGateway[] = [];
const adminToken = `mga-${randomToken(30)}`;
let key: string;
let keyId: string;

/** Starts `serve --workers 2` on the shared env and DATA_DIR, and waits until both workers serve. */
async function start(): Promise<CliGateway> {
  const g = await spawnServe({ args: ['--workers', '2'], env, dataDir: path.join(work, 'data') });
  started.push(g);
  for (const n of [1, 2]) await g.waitForLog((l) => l.msg.startsWith(`worker ${n} (pid`) && l.msg.includes('ready in'), 60_000);
  await g.waitForLog((l) => l.msg.includes('listening on') && l.msg.includes('with 2 workers'), 60_000);
  return g;
}

/** Polls `read` until `done` accepts its value, or `ms` pass; returns the last value either way (the caller asserts). */
async function until<T>(read: () => Promise<T>, done: (v: T) => boolean, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (done(v) || Date.now() > end) return v;
    await sleep(100);
  }
}

beforeAll(async () => {
  // The daily counter and the ledger's days must be the same day from the first request to the
  // last read: a run that would straddle midnight UTC waits for the new day first.
  const leftToday = 86_400_000 - (Date.now() % 86_400_000);
  if (leftToday < 90_000) await sleep(leftToday + 500);
  fake = await startFakeUpstreams();
  db = await freshPostgres();
  work = mkdtempSync(path.join(tmpdir(), 'mg-workers-i42-'));
  const config = path.join(work, 'gateway.config.yaml');
  writeFileSync(config, shutdownTestConfig(fake.url));
  env = {
    ...baseEnv(),
    PORT: '0',
    DATABASE_URL: db.url,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_KEY_PREFIX: `mgtest:${randomToken(6)}:`,
    GATEWAY_CONFIG: config,
    GATEWAY_ADMIN_TOKEN: adminToken,
    LEDGER_FLUSH_MS: '200',
  };
  gw = await start();
  const h = { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' };
  const email = `i42-${randomToken(6).toLowerCase()}@example.com`;
  expect((await fetch(`${gw.url}/admin/v1/users`, { method: 'POST', headers: h, body: JSON.stringify({ email }) })).status).toBe(201);
  const made = (await (await fetch(`${gw.url}/admin/v1/keys`, { method: 'POST', headers: h, body: JSON.stringify({ user: email }) })).json()) as { key: string; id: string };
  key = made.key;
  keyId = made.id;
  expect(keyId).toMatch(/^key_/);
  sql = new pg.Client({ connectionString: db.url });
  await sql.connect();
}, 120_000);

afterAll(async () => {
  await sql?.end().catch(() => {});
  for (const g of started) await g.kill();
  await fake?.close();
  await db?.drop();
  if (work) rmSync(work, { recursive: true, force: true });
}, 30_000);

const auth = () => ({ authorization: `Bearer ${key}` });
const errorOf = (a: Answer) => (JSON.parse(a.body) as { error: { code: string; param: string | null } }).error;

type Books = {
  ledger: { n: number; billed: number };
  daily: { n: number; billed: number };
  /** The Redis daily token counter, as GET /v1/usage reads it. */
  counter: { used: number };
  /** The ledger as GET /v1/usage reports it (from usage_daily). */
  usage: { requests: number; billed: number };
};

async function books(url: string, id = keyId): Promise<Books> {
  const ledger = await sql.query('SELECT count(*)::int AS n, coalesce(sum(billed_tokens), 0)::int AS billed FROM usage_records WHERE api_key_id = $1', [id]);
  const daily = await sql.query('SELECT coalesce(sum(requests), 0)::int AS n, coalesce(sum(billed_tokens), 0)::int AS billed FROM usage_daily WHERE api_key_id = $1', [id]);
  const usage = (await (await fetch(`${url}/v1/usage`, { headers: auth() })).json()) as { limits: { daily_tokens: { used: number } }; totals: { requests: number; billed_tokens: number } };
  return {
    ledger: ledger.rows[0],
    daily: daily.rows[0],
    counter: { used: usage.limits.daily_tokens.used },
    usage: { requests: usage.totals.requests, billed: usage.totals.billed_tokens },
  };
}

type LogRecord = { path: string; method: string; request_id: string; error_code: string | null; model: string | null; client_request_id: string | null; status: number; key: { id: string }; usage: { billed_tokens: number } | null };

/** Every record GET /admin/v1/requests lists for `query`, page after page. */
async function requestLog(url: string, query: string): Promise<LogRecord[]> {
  const out: LogRecord[] = [];
  for (let cursor: string | null = null; ; ) {
    const res = await fetch(`${url}/admin/v1/requests?limit=200&${query}${cursor ? `&cursor=${cursor}` : ''}`, { headers: { authorization: `Bearer ${adminToken}` } });
    expect(res.status).toBe(200);
    const page = (await res.json()) as { data: LogRecord[]; next_cursor: string | null };
    out.push(...page.data);
    if (!page.next_cursor) return out;
    cursor = page.next_cursor;
  }
}

let answered200 = 0;
let sentForKey = 0;
let before: Books;

it(`what the audit broke, on two workers: refused at the edge, or ${DUPS} requests sharing an id billed and logged ${DUPS} times; every book equals the answers`, async () => {
  const from = Date.now();
  // A 4,000-letter X-Request-Id: refused, naming the header, before anything is billed.
  const long = await postOnce(gw.url, '/v1/chat/completions', { ...auth(), 'x-request-id': 'a'.repeat(4000) }, chat('quick'));
  expect(long.status).toBe(400);
  expect(errorOf(long)).toMatchObject({ code: 'invalid_request_id', param: 'x-request-id' });

  // 200 at once sharing one X-Request-Id, each on its own connection: the primary hands them to both workers.
  const dups = await Promise.all(Array.from({ length: DUPS }, () => postOnce(gw.url, '/v1/chat/completions', { ...auth(), 'x-request-id': 'dup-2' }, chat('quick'))));
  expect(dups.map((a) => a.status)).toEqual(dups.map(() => 200));
  const ids = dups.map((a) => a.headers['x-request-id'] as string);
  expect(new Set(ids).size).toBe(DUPS);
  expect(ids.every((id) => /^req_[A-Za-z0-9_-]+$/.test(id))).toBe(true);
  expect(dups.every((a) => a.headers['x-client-request-id'] === 'dup-2')).toBe(true);

  // A NUL in a model name: in a Gemini path, and in a chat body. Refused, never stored.
  const gemini = await postOnce(gw.url, '/v1beta/models/x%00y:generateContent', { 'x-goog-api-key': key }, { contents: [{ role: 'user', parts: [{ text: 'Say hello.' }] }] });
  expect(gemini.status).toBe(400);
  const nul = await postOnce(gw.url, '/v1/chat/completions', auth(), { ...chat('quick'), model: 'x\u0000y' });
  expect(nul.status).toBe(400);
  expect(errorOf(nul).param).toBe('model');

  // And plain requests after them: the writers still write (one bad value used to stop every later batch).
  const plain = await Promise.all(Array.from({ length: PLAIN }, (_, i) => postOnce(gw.url, '/v1/chat/completions', i % 2 ? auth() : { ...auth(), 'x-client-request-id': `plain-${i}` }, chat('quick'))));
  expect(plain.map((a) => a.status)).toEqual(plain.map(() => 200));

  const answers = [long, ...dups, gemini, nul, ...plain];
  answered200 = answers.filter((a) => a.status === 200).length;
  sentForKey = answers.length;
  expect(answered200).toBe(DUPS + PLAIN);

  // The dup-2 requests landed on both workers (each worker's request line names it and the client's id).
  await until(async () => gw.logs().filter((l) => l.time >= from && l.client_request_id === 'dup-2').length, (n) => n >= DUPS, 10_000);
  const workers = new Set(gw.logs().filter((l) => l.time >= from && l.client_request_id === 'dup-2').map((l) => l.worker));
  expect([...workers].sort()).toEqual([1, 2]);

  // The books, once the ledgers (200 ms) and the request logs (1 s) of both workers have flushed.
  const b = await until(() => books(gw.url), (x) => x.ledger.n >= answered200 && x.daily.n >= answered200 && x.usage.requests >= answered200);
  expect(b.ledger.n).toBe(answered200);
  expect(b.daily.n).toBe(answered200);
  expect(b.usage.requests).toBe(answered200);
  expect(b.ledger.billed).toBeGreaterThan(0);
  expect(b.daily.billed).toBe(b.ledger.billed);
  expect(b.usage.billed).toBe(b.ledger.billed);
  // Redis settled every hold to what the upstream reported: the counter is what the ledger bills.
  expect(b.counter.used).toBe(b.ledger.billed);
  before = b;

  // Every request for dup-2 has its own record, its own id (the one it was answered with), and its own usage.
  const dupLog = await until(() => requestLog(gw.url, 'client_request_id=dup-2'), (r) => r.length >= DUPS && r.every((x) => x.usage));
  expect(dupLog).toHaveLength(DUPS);
  expect(new Set(dupLog.map((r) => r.request_id))).toEqual(new Set(ids));
  expect(dupLog.every((r) => r.client_request_id === 'dup-2' && r.status === 200 && r.key.id === keyId && r.usage !== null && r.usage.billed_tokens > 0)).toBe(true);
  // Each record's usage is its own ledger row: their sum is the dup-2 rows' sum.
  const dupRows = await sql.query('SELECT coalesce(sum(billed_tokens), 0)::int AS billed FROM usage_records WHERE request_id = ANY($1)', [ids]);
  expect(dupLog.reduce((s, r) => s + r.usage!.billed_tokens, 0)).toBe(dupRows.rows[0].billed);

  // Every inference request the key sent is in the log, the two NUL refusals included (without the
  // model they named); the 4,000-letter id is refused before anything is recorded. (The key's own
  // GET /v1/usage reads above are recorded too: left out.)
  const inference = async () => (await requestLog(gw.url, `key=${keyId}`)).filter((r) => r.method === 'POST');
  const all = await until(inference, (r) => r.length >= sentForKey - 1);
  expect(all).toHaveLength(sentForKey - 1);
  expect(new Set(all.map((r) => r.request_id)).size).toBe(all.length);
  expect(all.filter((r) => r.status === 200)).toHaveLength(answered200);
  expect(all.every((r) => (r.status === 200) === (r.usage !== null))).toBe(true);
  const refused = all.filter((r) => r.status === 400).sort((x, y) => x.path.localeCompare(y.path));
  expect(refused.map((r) => [r.path, r.error_code, r.model])).toEqual([
    ['/v1/chat/completions', 'invalid_parameter', null],
    ['/v1beta/models/x%00y:generateContent', 'invalid_parameter', null],
  ]);
  // Neither writer failed or set anything aside.
  expect(gw.logs().filter((l) => l.level >= 50)).toEqual([]);
}, 90_000);

it('across a graceful restart with a dead process’s bad segment in DATA_DIR: the start succeeds, the books are unchanged, what can be written is, the rest is set aside', async () => {
  expect(before).toBeDefined();
  const stopped = await gw.stop('SIGTERM');
  expect(stopped).toEqual({ code: 0, signal: null });
  // What the stopped workers wrote is all in the database: nothing left to replay.
  const ledgerDir = path.join(gw.dataDir, 'ledger');
  expect(readdirSync(ledgerDir).filter((f) => f.endsWith('.jsonl'))).toEqual([]);

  // A segment of a process that died (pid 2147483646 is never alive): what a 4,000-letter client id
  // left there before issue 42, and a token count past an integer column.
  const createdAt = new Date().toISOString();
  const record = (requestId: string, over: Partial<LedgerRecord> = {}): LedgerRecord => ({
    requestId, apiKeyId: SYNTHETIC_KEY, userId: 'usr_i42_synthetic', oauthAppId: null, model: 'quick', provider: 'openai', upstreamModel: 'gpt-4o-mini', endpoint: 'chat',
    promptTokens: 1, completionTokens: 2, cachedTokens: 0, reasoningTokens: 0, surchargeTokens: 0, multiplier: 1, billedTokens: 3,
    usageSource: 'reported', status: 200, errorCode: null, latencyMs: 5, createdAt, ...over,
  });
  const longId = `dead-long-${'L'.repeat(3990)}`;
  const overflowId = `dead-overflow-${randomToken(6)}`;
  expect(longId).toHaveLength(4000);
  mkdirSync(ledgerDir, { recursive: true });
  const segment = path.join(ledgerDir, '2147483646-7-0.jsonl');
  writeFileSync(segment, [record(longId), record(overflowId, { promptTokens: 2 ** 33 })].map((r) => JSON.stringify(r)).join('\n') + '\n');

  gw = await start();
  const ready = await until(async () => (await fetch(`${gw.url}/readyz`)).status, (s) => s === 200, 30_000);
  expect(ready).toBe(200);

  // The first record was written once (its id cut to 128 characters), counted once in its day; the second set aside.
  const synthetic = await until(
    async () => (await sql.query('SELECT request_id, prompt_tokens FROM usage_records WHERE api_key_id = $1', [SYNTHETIC_KEY])).rows as { request_id: string; prompt_tokens: number }[],
    (rows) => rows.length >= 1,
  );
  expect(synthetic).toEqual([{ request_id: `${longId.slice(0, 127)}…`, prompt_tokens: 1 }]);
  const syntheticDaily = await sql.query('SELECT sum(requests)::int AS n, sum(billed_tokens)::int AS billed FROM usage_daily WHERE api_key_id = $1', [SYNTHETIC_KEY]);
  expect(syntheticDaily.rows[0]).toEqual({ n: 1, billed: 3 });
  const rejectedDir = path.join(ledgerDir, 'rejected');
  expect(existsSync(rejectedDir)).toBe(true);
  const setAside = readdirSync(rejectedDir).flatMap((f) => readFileSync(path.join(rejectedDir, f), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as LedgerRecord));
  // Both workers recover at their start; one claims the segment (a rename), so the record is set aside once.
  expect(setAside).toHaveLength(1);
  expect(new Set(setAside.map((r) => `${r.requestId} ${r.promptTokens}`))).toEqual(new Set([`${overflowId} ${2 ** 33}`]));
  expect(existsSync(segment)).toBe(false);

  // The real key's books are what they were before the restart (the counter lives in Redis, the rest in PostgreSQL).
  expect(await books(gw.url)).toEqual(before);
  expect(await requestLog(gw.url, 'client_request_id=dup-2')).toHaveLength(DUPS);

  // And the restarted workers serve, and both ledgers write: the books move by exactly what is answered.
  const restartedAt = Date.now();
  const more = await Promise.all(Array.from({ length: 20 }, () => postOnce(gw.url, '/v1/chat/completions', auth(), chat('quick'))));
  expect(more.map((a) => a.status)).toEqual(more.map(() => 200));
  const after = await until(() => books(gw.url), (x) => x.ledger.n >= answered200 + 20 && x.daily.n >= answered200 + 20);
  expect(after.ledger.n).toBe(answered200 + 20);
  expect(after.daily.n).toBe(answered200 + 20);
  expect(after.daily.billed).toBe(after.ledger.billed);
  expect(after.counter.used).toBe(after.ledger.billed);
  expect(after.usage).toEqual({ requests: answered200 + 20, billed: after.ledger.billed });
  const answeredBy = new Set(gw.logs().filter((l) => l.time >= restartedAt && l.http?.url === '/v1/chat/completions').map((l) => l.worker));
  expect([...answeredBy].sort()).toEqual([1, 2]);
  // The only errors logged are the set-aside record's (once per worker that replayed it): no ledger write failed.
  const errors = gw.logs().filter((l) => l.level >= 50);
  expect(errors.length).toBeGreaterThanOrEqual(1);
  expect(errors.every((l) => l.msg.startsWith('usage ledger: a record the database refused was set aside in'))).toBe(true);
  expect(errors.every((l) => l.request_id === overflowId)).toBe(true);
}, 120_000);
