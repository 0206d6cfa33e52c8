// npm run bench:requests -- [--rows N] [--quick]
//
// The request log's pages at size: loads N records (default 100,000) over 7 days, 200 keys and three
// models, each with its ledger row, into the embedded database and into PostgreSQL, then times the
// reads the dashboard makes (GET /v1/requests and /admin/v1/requests through `listRequests`): the
// newest page, a key's page, a user's page, a rare model, the errors, and a page 1,000 records deep
// by cursor. Not a test: it checks only that every page holds what its filter asks.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { openDatabase, type Database } from '../server/db/client.ts';
import { listRequests, type ListInput } from '../server/requests/query.ts';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const at = args.indexOf('--rows');
const ROWS = at >= 0 ? Number(args[at + 1]) : quick ? 5_000 : 100_000;
const base = new URL(process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test');
const links = () => ({ request_url: null, response_url: null, expires_at: '' });

async function load(db: Database): Promise<void> {
  // Seven days back from now, one record every few seconds; 2 % errors; model c is rare (1 %).
  await db.sql.query(
    `INSERT INTO request_log (request_id, created_at, api_key_id, user_id, method, path, endpoint, format, model, status, error_code, latency_ms, first_token_ms, upstream, attempts)
     SELECT 'req_' || i, now() - (i * (604800.0 / $1)) * interval '1 second', 'key_' || (i % 200), 'usr_' || (i % 50), 'POST', '/v1/chat/completions', 'chat', 'openai',
            CASE WHEN i % 100 = 0 THEN 'model-c' WHEN i % 2 = 0 THEN 'model-a' ELSE 'model-b' END,
            CASE WHEN i % 50 = 0 THEN 502 ELSE 200 END, CASE WHEN i % 50 = 0 THEN 'all_upstreams_failed' END, 300 + i % 500, 100 + i % 200, 'openai',
            '[{"provider":"openai","key":null,"upstream_model":"gpt-4o-mini","start_ms":2,"ms":250,"status":null,"failure":null,"late_failure":null}]'::jsonb
     FROM generate_series(1, $1) AS i`,
    [ROWS],
  );
  await db.sql.query(
    `INSERT INTO usage_records (request_id, api_key_id, user_id, model, endpoint, prompt_tokens, completion_tokens, billed_tokens, usage_source, status, created_at)
     SELECT request_id, api_key_id, user_id, model, 'chat', 120, 40, 160, 'reported', status, created_at + interval '300 milliseconds' FROM request_log`,
  );
  await db.sql.exec('ANALYZE request_log; ANALYZE usage_records');
}

async function time(db: Database, q: Partial<ListInput>, check: (r: Awaited<ReturnType<typeof listRequests>>) => boolean, scope: { userId?: string } = {}): Promise<number> {
  const runs: number[] = [];
  for (let i = 0; i < (quick ? 3 : 15); i++) {
    const t = performance.now();
    const page = await listRequests(db.sql, scope, { limit: 50, ...q }, links);
    runs.push(performance.now() - t);
    if (!check(page)) throw new Error(`a page does not hold what ${JSON.stringify(q)} asks`);
  }
  return runs.sort((a, b) => a - b)[Math.floor(runs.length / 2)]!;
}

async function deepCursor(db: Database): Promise<string> {
  let cursor: string | undefined;
  for (let i = 0; i < 20; i++) cursor = (await listRequests(db.sql, {}, { limit: 50, ...(cursor && { cursor }) }, links)).next_cursor ?? undefined;
  return cursor!;
}

const results: Record<string, Record<string, number>> = {};
for (const kind of ['embedded', 'postgresql'] as const) {
  let dir: string | null = null;
  let dbName: string | null = null;
  let db: Database;
  if (kind === 'embedded') {
    dir = mkdtempSync(path.join(tmpdir(), 'mg-bench-requests-'));
    db = await openDatabase({ dataDir: dir });
  } else {
    dbName = `mg_bench_requests_${process.pid}`;
    const c = new pg.Client({ connectionString: base.toString() });
    await c.connect();
    await c.query(`CREATE DATABASE ${dbName}`);
    await c.end();
    const url = new URL(base);
    url.pathname = `/${dbName}`;
    db = await openDatabase({ databaseUrl: url.toString(), dataDir: mkdtempSync(path.join(tmpdir(), 'mg-bench-requests-')) });
  }
  const t = performance.now();
  await load(db);
  console.log(`${kind}: ${ROWS} records and their ledger rows loaded in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  const cursor = await deepCursor(db);
  const r: Record<string, number> = {};
  r['newest page (admin)'] = await time(db, {}, (p) => p.data.length === 50);
  r['one key'] = await time(db, { key: 'key_7' }, (p) => p.data.every((x) => x.key === null || x.key.id === 'key_7'));
  r['one user'] = await time(db, {}, (p) => p.data.every((x) => x.user_id === 'usr_7'), { userId: 'usr_7' });
  r['rare model (1 %)'] = await time(db, { model: 'model-c' }, (p) => p.data.every((x) => x.model === 'model-c'));
  r['errors (2 %)'] = await time(db, { status: 'error' }, (p) => p.data.every((x) => x.status >= 400));
  r['1,000 deep by cursor'] = await time(db, { cursor }, (p) => p.data.length === 50);
  results[kind] = r;
  await db.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  if (dbName) {
    const c = new pg.Client({ connectionString: base.toString() });
    await c.connect();
    await c.query(`DROP DATABASE ${dbName} WITH (FORCE)`);
    await c.end();
  }
}

const names = Object.keys(results.embedded!);
console.log(`\nRequest log pages of 50 at ${ROWS.toLocaleString('en')} records (median ms)\n`);
console.log(`| read | embedded | PostgreSQL |\n|---|---:|---:|`);
for (const n of names) console.log(`| ${n} | ${results.embedded![n]!.toFixed(1)} | ${results.postgresql![n]!.toFixed(1)} |`);
