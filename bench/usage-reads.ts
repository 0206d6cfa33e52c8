// npm run bench:usage -- [--rows N] [--days D] [--keys K] [--reuse] [--quick]
//
// Loads N raw ledger rows (default 5,000,000) straight into PostgreSQL — D days (90) of traffic over
// K keys (1,000) and three models, one key holding a fifth of it — runs the rebuild that sums them
// into usage_daily and its roll-ups (usage_day_models, usage_day_users), then times every usage
// read through a running gateway and checks each one's totals against sums over the raw rows.
// BENCH_DATABASE_URL (default: the tests' server, database mg_bench_usage) is dropped and made anew
// unless --reuse finds it loaded with N rows already.
// 50 million rows: `npm run bench:usage -- --rows 50000000` (about 15 GB of disk, an hour here).
// Not a test: it asserts nothing but that each read's totals equal the raw sums.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { openDatabase } from '../server/db/client.ts';
import { ensurePartitions, addDays } from '../server/billing/ledger-partitions.ts';
import { rebuildUsage } from '../server/billing/usage-rebuild.ts';
import { utcDay } from '../server/billing/plans.ts';

const args = process.argv.slice(2);
const option = (name: string, fallback: number) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const quick = args.includes('--quick');
const ROWS = option('rows', quick ? 20_000 : 5_000_000);
const DAYS = option('days', 90);
const KEYS = option('keys', 1_000);
const MODELS = ['gpt-4o-mini', 'claude-sonnet-4-5', 'gemini-2.5-flash'];
const ADMIN_TOKEN = 'mga-bench-usage-admin-token-0123456789';

const base = new URL(process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test');
const dbName = process.env.BENCH_DATABASE_URL ? base.pathname.slice(1) : 'mg_bench_usage';
const url = new URL(base);
url.pathname = `/${dbName}`;
const today = utcDay(Date.now());
const firstDay = addDays(today, -(DAYS - 1));
const ms = (t: number) => `${(performance.now() - t).toFixed(0)} ms`;

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: base.toString() });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

// ---- the database --------------------------------------------------------------------------------
let loaded = false;
if (args.includes('--reuse')) {
  loaded = await admin(async (c) => (await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [dbName])).rowCount === 1);
}
if (!loaded && !process.env.BENCH_DATABASE_URL) {
  await admin(async (c) => {
    await c.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    await c.query(`CREATE DATABASE ${dbName}`);
  });
}
const db = await openDatabase({ databaseUrl: url.toString(), dataDir: tmpdir() });
// Without the query time limit: counting 50 million rows from a cold cache takes longer.
const count = Number((await db.sql.transaction([{ text: 'SELECT count(*)::bigint AS n FROM usage_records' }]))[0]![0]!.n);
if (count !== ROWS) {
  if (count) throw new Error(`${dbName} holds ${count} ledger rows, not ${ROWS}: run without --reuse to load it anew`);
  const days = Array.from({ length: DAYS + 1 }, (_, i) => addDays(firstDay, i));
  await ensurePartitions(db.sql, days);
  // Row i: day i % DAYS; with j = i / DAYS, second j of that day, a fifth of each day's rows on
  // key_bench_hot (the key the gateway below issues is renamed to it), the rest over K - 1 keys of
  // 300 users, and model j % 3.
  const t = performance.now();
  const chunk = 500_000;
  for (let from = 1; from <= ROWS; from += chunk) {
    const to = Math.min(ROWS, from + chunk - 1);
    await db.sql.transaction([
      {
        text: `INSERT INTO usage_records (request_id, api_key_id, user_id, model, provider, endpoint, prompt_tokens, completion_tokens, cached_tokens,
                 reasoning_tokens, billed_tokens, usage_source, status, error_code, latency_ms, created_at)
               SELECT 'req_' || i, CASE WHEN i / ${DAYS} % 5 = 0 THEN 'key_bench_hot' ELSE 'key_bench_' || (i / ${DAYS} % ${KEYS - 1}) END,
                      CASE WHEN i / ${DAYS} % 5 = 0 THEN 'user_bench_hot' ELSE 'user_bench_' || (i / ${DAYS} % ${KEYS - 1} % 300) END,
                      (ARRAY[${MODELS.map((m) => `'${m}'`).join(', ')}])[1 + i / ${DAYS} % 3], 'bench', 'chat', 20 + i % 400, 5 + i % 300, i % 64, i % 3 * 10,
                      25 + i % 400 + i % 300, 'reported', CASE WHEN i % 50 = 0 THEN 429 ELSE 200 END, CASE WHEN i % 50 = 0 THEN 'rate_limited' END, 100 + i % 900,
                      $1::date + (i % ${DAYS})::int + make_interval(secs => ((i / ${DAYS}) % 86400)::int)
               FROM generate_series($2::bigint, $3::bigint) AS i`,
        params: [firstDay, from, to],
      },
    ]);
    if (process.stderr.isTTY) process.stderr.write(`\rloaded ${to.toLocaleString('en')} of ${ROWS.toLocaleString('en')} rows (${ms(t)})`);
  }
  console.log(`${process.stderr.isTTY ? '\n' : ''}loaded ${ROWS.toLocaleString('en')} rows over ${DAYS} days in ${ms(t)}`);
  await db.sql.transaction([{ text: 'ANALYZE usage_records' }]);
}
if (!Number((await db.sql.query('SELECT count(*)::int AS n FROM usage_daily'))[0]!.n)) {
  const r = performance.now();
  const rebuilt = await rebuildUsage(db.sql, {
    progress: (p) => process.stderr.isTTY && process.stderr.write(`\rrebuild: ${p.n}/${p.of} days`),
  });
  console.log(`${process.stderr.isTTY ? '\n' : ''}rebuild: ${rebuilt.days} days, ${rebuilt.requests.toLocaleString('en')} requests in ${ms(r)}`);
  await db.sql.transaction([{ text: 'ANALYZE usage_daily' }]);
}
const size = await db.sql.query(
  `SELECT pg_size_pretty(sum(pg_total_relation_size(c.oid))) AS raw, (SELECT pg_size_pretty(pg_total_relation_size('usage_daily'))) AS daily,
          (SELECT count(*) FROM usage_daily)::int AS daily_rows,
          (SELECT count(*) FROM usage_day_models)::int AS model_rows, (SELECT count(*) FROM usage_day_users)::int AS user_rows
   FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'usage_records'::regclass`,
);
const n = (v: unknown) => Number(v).toLocaleString('en');
console.log(
  `raw rows ${n(ROWS)} (${size[0]!.raw}), usage_daily ${n(size[0]!.daily_rows)} rows (${size[0]!.daily}), usage_day_models ${n(size[0]!.model_rows)}, usage_day_users ${n(size[0]!.user_rows)}`,
);

// ---- a gateway on it -----------------------------------------------------------------------------
const dataDir = mkdtempSync(path.join(tmpdir(), 'mg-bench-usage-'));
const child = spawn(process.execPath, [new URL('../bin/model-gateway.mjs', import.meta.url).pathname, 'serve'], {
  env: { PATH: process.env.PATH, HOME: process.env.HOME, DATABASE_URL: url.toString(), DATA_DIR: dataDir, GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN, GATEWAY_METADATA_FETCH: 'off', HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'warn' },
  stdio: ['ignore', 'ignore', 'inherit'],
});
child.on('error', () => {});
process.on('exit', () => child.kill('SIGKILL'));
const info = path.join(dataDir, 'server.json');
for (let n = 0; n < 600 && !existsSync(info); n++) await new Promise((r) => setTimeout(r, 100));
if (!existsSync(info)) throw new Error('the gateway did not start');
const gw: string = JSON.parse(readFileSync(info, 'utf8')).url;
const adminHeaders = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
const post = async (p: string, body: unknown) => (await fetch(gw + p, { method: 'POST', headers: adminHeaders, body: JSON.stringify(body) })).json() as Promise<Record<string, string>>;
const user = await post('/admin/v1/users', { email: `bench-${Date.now()}@example.com` });
const key = await post('/admin/v1/keys', { user: user.id });
// The hot key's sums become this key's (those of an earlier run's key too): its own usage is what
// GET /v1/usage reads. Its raw rows keep the name key_bench_hot, which the check below reads.
await db.sql.transaction([{ text: `UPDATE usage_daily SET api_key_id = $1 WHERE api_key_id = 'key_bench_hot' OR api_key_id NOT LIKE 'key\\_bench\\_%'`, params: [key.id] }]);

// ---- the reads -----------------------------------------------------------------------------------
type Totals = { requests: number; errors: number; billed_tokens: number; prompt_tokens: number };
async function rawTotals(start: string, end: string, keyId?: string): Promise<Totals> {
  const [r] = await db.sql.transaction([
    {
      text: `SELECT count(*)::int AS requests, count(*) FILTER (WHERE status >= 400)::int AS errors, coalesce(sum(billed_tokens), 0)::bigint AS billed, coalesce(sum(prompt_tokens), 0)::bigint AS prompt
             FROM usage_records WHERE created_at >= $1::date AND created_at < $2::date + 1 ${keyId ? 'AND api_key_id = $3' : ''}`,
      params: keyId ? [start, end, keyId] : [start, end],
    },
  ]);
  const row = r![0]!;
  return { requests: Number(row.requests), errors: Number(row.errors), billed_tokens: Number(row.billed), prompt_tokens: Number(row.prompt) };
}

const hot = 'key_bench_hot';
const reads: [name: string, path: string, auth: string, start: string, keyId?: string][] = [
  ['GET /v1/usage (today)', `/v1/usage?start=${today}`, key.key!, today, hot],
  ['GET /v1/usage (7 days, the default)', '/v1/usage', key.key!, addDays(today, -6), hot],
  ['GET /v1/usage (30 days)', `/v1/usage?start=${addDays(today, -29)}`, key.key!, addDays(today, -29), hot],
  [`GET /v1/usage (${DAYS} days)`, `/v1/usage?start=${firstDay}`, key.key!, firstDay, hot],
  ['GET /admin/v1/usage (7 days, the default)', '/admin/v1/usage', ADMIN_TOKEN, addDays(today, -6)],
  ['GET /admin/v1/usage (30 days)', `/admin/v1/usage?start=${addDays(today, -29)}`, ADMIN_TOKEN, addDays(today, -29)],
  [`GET /admin/v1/usage (${DAYS} days)`, `/admin/v1/usage?start=${firstDay}`, ADMIN_TOKEN, firstDay],
];
const rounds = quick ? 3 : 11;
console.log(`\nreads (${rounds} each, after one to warm up), ${ROWS.toLocaleString('en')} rows:`);
const rows: string[][] = [];
for (const [name, p, auth, start, keyId] of reads) {
  const times: number[] = [];
  let body: { totals: Totals } | null = null;
  for (let i = 0; i <= rounds; i++) {
    const t = performance.now();
    const res = await fetch(gw + p, { headers: { authorization: `Bearer ${auth}` } });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`${name}: ${res.status} ${text.slice(0, 300)}`);
    if (i) times.push(performance.now() - t);
    body = JSON.parse(text);
  }
  const raw = await rawTotals(start, today, keyId);
  const got = { requests: body!.totals.requests, errors: body!.totals.errors, billed_tokens: body!.totals.billed_tokens, prompt_tokens: body!.totals.prompt_tokens };
  const equal = JSON.stringify(got) === JSON.stringify(raw);
  if (!equal) throw new Error(`${name}: totals ${JSON.stringify(got)} differ from the raw rows' ${JSON.stringify(raw)}`);
  times.sort((a, b) => a - b);
  rows.push([name, times[Math.floor((times.length - 1) / 2)]!.toFixed(1), times.at(-1)!.toFixed(1), got.requests.toLocaleString('en'), 'equal']);
}
const header = ['read', 'median ms', 'max ms', 'requests', 'totals vs raw rows'];
const w = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
console.log([header, w.map((n) => '-'.repeat(n)), ...rows].map((r) => r.map((c, i) => (i ? c.padStart(w[i]!) : c.padEnd(w[i]!))).join('  ')).join('\n'));

child.kill('SIGTERM');
await new Promise((r) => child.once('exit', r));
rmSync(dataDir, { recursive: true, force: true });
await db.close();
if (quick) await admin((c) => c.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`));
writeFileSync(path.join(tmpdir(), 'mg-bench-usage.txt'), rows.map((r) => r.join('\t')).join('\n'));
