// npm run bench:ledger -- [--rows N] [--quick]
//
// The ledger's write cost per row: records written through UsageLedger in batches of 500 (what a
// busy gateway's flush takes), after 10,000 rows to warm up, timed from flush to commit. Embedded
// (PGlite, COPY) and PostgreSQL (INSERT … unnest), each in a fresh database. The records spread
// over 50 keys, 3 models and the day so far, like a gateway's traffic.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { openDatabase, type Database } from '../server/db/client.ts';
import { UsageLedger, type LedgerRecord } from '../server/billing/ledger.ts';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const i = args.indexOf('--rows');
const ROWS = i >= 0 ? Number(args[i + 1]) : quick ? 2_000 : 20_000;
const WARM = quick ? 1_000 : 10_000;
const BATCH = 500;

let seq = 0;
const record = (): LedgerRecord => {
  const n = seq++;
  return {
    requestId: `req_bench_${n}_${Math.random().toString(36).slice(2, 10)}`,
    apiKeyId: `key_${n % 50}`,
    userId: `user_${n % 50 % 20}`,
    oauthAppId: null,
    model: ['gpt-4o-mini', 'claude-sonnet-4-5', 'gemini-2.5-flash'][n % 3]!,
    provider: 'openai',
    upstreamModel: 'gpt-4o-mini-2024-07-18',
    endpoint: 'chat',
    promptTokens: 20 + (n % 400),
    completionTokens: 5 + (n % 300),
    cachedTokens: 0,
    reasoningTokens: 0,
    surchargeTokens: 0,
    multiplier: 1,
    billedTokens: 25 + (n % 700),
    usageSource: 'reported',
    status: 200,
    errorCode: null,
    latencyMs: 120,
    createdAt: new Date().toISOString(),
  };
};

async function measure(name: string, db: Database): Promise<string> {
  // The partitions a running gateway's upkeep makes (where the tree has them).
  const upkeep = await import('../server/billing/ledger-partitions.ts' as string).catch(() => null);
  await upkeep?.maintainLedger(db.sql, { retention_days: 90, aggregate_retention_days: 730 }, Date.now());
  const dir = mkdtempSync(path.join(tmpdir(), 'mg-bench-ledger-'));
  const ledger = new UsageLedger(db.sql, dir, { flushMs: 3_600_000, batchSize: 1_000_000 });
  const batch = async () => {
    for (let k = 0; k < BATCH; k++) ledger.write(record());
    const t = performance.now();
    await ledger.flush();
    return performance.now() - t;
  };
  for (let n = 0; n < WARM; n += BATCH) await batch();
  const times: number[] = [];
  for (let n = 0; n < ROWS; n += BATCH) times.push(await batch());
  await ledger.close();
  rmSync(dir, { recursive: true, force: true });
  const perRow = (times.reduce((a, b) => a + b, 0) * 1000) / (times.length * BATCH);
  times.sort((a, b) => a - b);
  return `${name.padEnd(12)} ${perRow.toFixed(1).padStart(6)} µs per row   (batch of ${BATCH}: median ${times[times.length >> 1]!.toFixed(1)} ms, max ${times.at(-1)!.toFixed(1)} ms)`;
}

const lines: string[] = [];
const dataDir = mkdtempSync(path.join(tmpdir(), 'mg-bench-ledger-db-'));
const embedded = await openDatabase({ dataDir });
lines.push(await measure('embedded', embedded));
await embedded.close();
rmSync(dataDir, { recursive: true, force: true });

const base = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const name = `mg_bench_ledger_${process.pid}`;
const admin = async (sql: string) => {
  const c = new pg.Client({ connectionString: base });
  await c.connect();
  await c.query(sql).finally(() => c.end());
};
try {
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(base);
  url.pathname = `/${name}`;
  const postgres = await openDatabase({ databaseUrl: url.toString(), dataDir: tmpdir() });
  lines.push(await measure('PostgreSQL', postgres));
  await postgres.close();
} catch (err) {
  lines.push(`PostgreSQL   unavailable: ${(err as Error).message}`);
} finally {
  await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
}
console.log(`ledger write cost, ${ROWS.toLocaleString('en')} rows after ${WARM.toLocaleString('en')} to warm up:\n${lines.join('\n')}`);
