// The daily aggregates every usage read reads equal the sums over the raw ledger rows: after
// concurrent writes from two instances (with retried and replayed batches), after a day's
// partition is dropped for retention, and after any number of rebuilds.
import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../server/db/client.ts';
import { applyMigrations, migrationsDir } from '../../server/db/migrate.ts';
import { UsageLedger, type LedgerRecord } from '../../server/billing/ledger.ts';
import { maintainLedger, partitionDays, partitionOf } from '../../server/billing/ledger-partitions.ts';
import { rebuildUsage } from '../../server/billing/usage-rebuild.ts';
import { utcDay } from '../../server/billing/plans.ts';
import { freshDataDir, freshPostgres } from '../helpers/gateway.ts';

const DAY = 86_400_000;
const NOW = Date.parse('2026-11-27T15:00:00Z');
const TODAY = utcDay(NOW);
const dayAgo = (n: number) => utcDay(NOW - n * DAY);

/** A deterministic spread of records over keys, models, days, statuses and metered units. */
function records(prefix: string, n: number, days: number[]): LedgerRecord[] {
  return Array.from({ length: n }, (_, i) => {
    const metered = i % 7 === 0;
    return {
      requestId: `${prefix}-${i}`,
      apiKeyId: `key_${i % 5}`,
      userId: `user_${i % 5 % 3}`,
      oauthAppId: null,
      model: ['m-a', 'm-b', 'm-c'][i % 3]!,
      provider: 'p',
      upstreamModel: null,
      endpoint: 'chat',
      promptTokens: 10 + (i % 13),
      completionTokens: 3 + (i % 5),
      cachedTokens: i % 4,
      reasoningTokens: i % 2,
      surchargeTokens: i % 11 === 0 ? 1000 : 0,
      cacheWriteTokens: i % 6,
      cacheWrite1hTokens: i % 6 > 3 ? 1 : 0,
      webSearchCalls: i % 10 === 0 ? 2 : 0,
      // Costs with more decimals than a float keeps, and some unknown.
      cost: i % 8 === 0 ? null : `0.00000${i % 97}123456789`,
      meteredUnit: metered ? 'image' : null,
      meteredQuantity: metered ? (i % 3) + 0.5 : null,
      multiplier: 1,
      billedTokens: 13 + (i % 17),
      usageSource: 'reported',
      status: i % 9 === 0 ? 502 : 200,
      errorCode: i % 9 === 0 ? 'upstream_error' : null,
      latencyMs: 5,
      // Spread over the day, from 00:00:00.000 on.
      createdAt: new Date(Date.parse(`${dayAgo(days[i % days.length]!)}T00:00:00Z`) + ((i * 7_919_000) % DAY)).toISOString(),
    };
  });
}

/** The sums of the columns the ledger had before usage buckets and cost (for the migration's test). */
const RAW_SUMS_BEFORE_COST = `
  SELECT api_key_id, to_char(created_at, 'YYYY-MM-DD') AS day, model, user_id, count(*)::int AS requests,
         count(*) FILTER (WHERE status >= 400)::int AS errors, sum(prompt_tokens)::text AS prompt, sum(completion_tokens)::text AS completion,
         sum(cached_tokens)::text AS cached, sum(reasoning_tokens)::text AS reasoning, sum(surcharge_tokens)::text AS surcharge,
         sum(billed_tokens)::text AS billed, max(metered_unit) AS unit, coalesce(sum(metered_quantity), 0)::float8 AS quantity
  FROM usage_records GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4`;
const RAW_SUMS = `
  SELECT api_key_id, to_char(created_at, 'YYYY-MM-DD') AS day, model, user_id, count(*)::int AS requests,
         count(*) FILTER (WHERE status >= 400)::int AS errors, sum(prompt_tokens)::text AS prompt, sum(completion_tokens)::text AS completion,
         sum(cached_tokens)::text AS cached, sum(reasoning_tokens)::text AS reasoning, sum(surcharge_tokens)::text AS surcharge,
         sum(billed_tokens)::text AS billed, max(metered_unit) AS unit, coalesce(sum(metered_quantity), 0)::float8 AS quantity,
         sum(cache_write_tokens)::text AS cache_write, sum(cache_write_1h_tokens)::text AS cache_write_1h, sum(web_search_calls)::text AS searches,
         coalesce(sum(cost), 0)::text AS cost, count(*) FILTER (WHERE cost IS NULL)::int AS unpriced
  FROM usage_records GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4`;
const AGGREGATES = (where = '') => `
  SELECT api_key_id, to_char(day, 'YYYY-MM-DD') AS day, model, user_id, requests, errors, prompt_tokens::text AS prompt,
         completion_tokens::text AS completion, cached_tokens::text AS cached, reasoning_tokens::text AS reasoning,
         surcharge_tokens::text AS surcharge, billed_tokens::text AS billed, metered_unit AS unit, metered_quantity AS quantity,
         cache_write_tokens::text AS cache_write, cache_write_1h_tokens::text AS cache_write_1h, web_search_calls::text AS searches,
         cost::text AS cost, unpriced_requests AS unpriced
  FROM usage_daily ${where} ORDER BY 1, 2, 3, 4`;

/** A roll-up's rows (usage_day_models, usage_day_users), and the same sums over the raw rows or over usage_daily. */
const ROLLUP_COLUMNS = `requests::int AS requests, errors::int AS errors, prompt_tokens::text AS prompt, completion_tokens::text AS completion,
  cached_tokens::text AS cached, reasoning_tokens::text AS reasoning, surcharge_tokens::text AS surcharge, billed_tokens::text AS billed,
  cache_write_tokens::text AS cache_write, cache_write_1h_tokens::text AS cache_write_1h, web_search_calls::text AS searches,
  cost::text AS cost, unpriced_requests::int AS unpriced`;
const ROLLUPS = [
  ['usage_day_models', 'model'],
  ['usage_day_users', 'user_id'],
] as const;
const rollup = (table: string, by: string) => `SELECT to_char(day, 'YYYY-MM-DD') AS day, ${by} AS id, ${ROLLUP_COLUMNS} FROM ${table} ORDER BY 1, 2`;
const rolledUpFrom = (by: string, from: 'raw' | 'daily') =>
  from === 'raw'
    ? `SELECT day, id, ${ROLLUP_COLUMNS} FROM (
         SELECT to_char(created_at, 'YYYY-MM-DD') AS day, ${by} AS id, count(*) AS requests, count(*) FILTER (WHERE status >= 400) AS errors,
                sum(prompt_tokens) AS prompt_tokens, sum(completion_tokens) AS completion_tokens, sum(cached_tokens) AS cached_tokens,
                sum(reasoning_tokens) AS reasoning_tokens, sum(surcharge_tokens) AS surcharge_tokens, sum(billed_tokens) AS billed_tokens,
                sum(cache_write_tokens) AS cache_write_tokens, sum(cache_write_1h_tokens) AS cache_write_1h_tokens, sum(web_search_calls) AS web_search_calls,
                coalesce(sum(cost), 0) AS cost, count(*) FILTER (WHERE cost IS NULL) AS unpriced_requests
         FROM usage_records GROUP BY 1, 2) s ORDER BY 1, 2`
    : `SELECT day, id, ${ROLLUP_COLUMNS} FROM (
         SELECT to_char(day, 'YYYY-MM-DD') AS day, ${by} AS id, sum(requests) AS requests, sum(errors) AS errors, sum(prompt_tokens) AS prompt_tokens,
                sum(completion_tokens) AS completion_tokens, sum(cached_tokens) AS cached_tokens, sum(reasoning_tokens) AS reasoning_tokens,
                sum(surcharge_tokens) AS surcharge_tokens, sum(billed_tokens) AS billed_tokens, sum(cache_write_tokens) AS cache_write_tokens,
                sum(cache_write_1h_tokens) AS cache_write_1h_tokens, sum(web_search_calls) AS web_search_calls, sum(cost) AS cost,
                sum(unpriced_requests) AS unpriced_requests
         FROM usage_daily GROUP BY 1, 2) s ORDER BY 1, 2`;
/** Each roll-up equals the sums of usage_daily's rows, and (where every day's raw rows are kept) those of the raw rows. */
async function expectRollupsExact(db: Database, alsoRaw = true) {
  for (const [table, by] of ROLLUPS) {
    const rows = await db.sql.query(rollup(table, by));
    expect(rows.length).toBeGreaterThan(0);
    expect(rows).toEqual(await db.sql.query(rolledUpFrom(by, 'daily')));
    if (alsoRaw) expect(rows).toEqual(await db.sql.query(rolledUpFrom(by, 'raw')));
  }
}

const ledgerOf = (db: Database) => new UsageLedger(db.sql, mkdtempSync(path.join(tmpdir(), 'mg-ledger-')), { flushMs: 60_000 });
const config = { retention_days: 90, aggregate_retention_days: 730 };

describe('on PostgreSQL, two instances', () => {
  let pgdb: Awaited<ReturnType<typeof freshPostgres>>;
  let a: Database;
  let b: Database;
  beforeAll(async () => {
    pgdb = await freshPostgres();
    a = await openDatabase({ databaseUrl: pgdb.url, dataDir: tmpdir() });
    b = await openDatabase({ databaseUrl: pgdb.url, dataDir: tmpdir() });
    await maintainLedger(a.sql, config, NOW);
  }, 60_000);
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await pgdb?.drop();
  });

  it('concurrent writers, retries and replays: the aggregates equal the raw sums, each row counted once', async () => {
    const one = ledgerOf(a);
    const two = ledgerOf(b);
    const first = records('a', 3000, [0, 1]);
    const second = records('b', 3000, [0, 1]);
    // Batches of both instances interleave on the same keys, days and models.
    for (let i = 0; i < 3000; i += 250) {
      for (const r of first.slice(i, i + 250)) one.write(r);
      for (const r of second.slice(i, i + 250)) two.write(r);
      await Promise.all([one.flush(), two.flush()]);
    }
    // A batch written again (a retry whose first attempt committed, a replayed segment), on both instances at once.
    for (const r of first.slice(0, 500)) one.write(r);
    for (const r of first.slice(0, 500)) two.write(r);
    await Promise.all([one.flush(), two.flush()]);
    await Promise.all([one.close(), two.close()]);

    const raw = await a.sql.query(RAW_SUMS);
    expect(raw.reduce((n, r) => n + Number(r.requests), 0)).toBe(6000);
    expect(await a.sql.query(AGGREGATES())).toEqual(raw);
    await expectRollupsExact(a);
    // The days fell into their own partitions, none into the default one.
    expect(await a.sql.query('SELECT count(*)::int AS n FROM usage_records_default')).toEqual([{ n: 0 }]);
    expect(await a.sql.query(`SELECT count(*)::int AS n FROM ${partitionOf(TODAY)}`)).toEqual([{ n: 3000 }]);
  }, 60_000);

  it('the rebuild gives the same sums, however often it runs, and leaves days without raw rows alone', async () => {
    const before = await a.sql.query(AGGREGATES());
    // Damage: a day's sums changed, another's removed, a bogus one for a kept day.
    await a.sql.exec(`UPDATE usage_daily SET requests = requests + 5, billed_tokens = 0 WHERE day = '${TODAY}'`);
    await a.sql.exec(`DELETE FROM usage_daily WHERE day = '${dayAgo(1)}'`);
    await a.sql.exec(`INSERT INTO usage_daily (api_key_id, day, model, user_id, requests) VALUES ('key_x', '${TODAY}', 'm-z', 'user_x', 9)`);
    // A day older than every partition: only its aggregate remains, which no rebuild may touch.
    await a.sql.exec(`INSERT INTO usage_daily (api_key_id, day, model, user_id, requests, billed_tokens) VALUES ('key_0', '${dayAgo(200)}', 'm-a', 'user_0', 4, 40)`);
    // The roll-ups damaged too: a day's changed, another's lost, and none for the day of sums only.
    await a.sql.exec(`UPDATE usage_day_models SET requests = requests + 1, cost = cost + 1 WHERE day = '${TODAY}'`);
    await a.sql.exec(`DELETE FROM usage_day_users WHERE day = '${dayAgo(1)}'`);
    const progress: string[] = [];
    const first = await rebuildUsage(a.sql, { from: dayAgo(300), progress: (p) => progress.push(`${p.day} ${p.n}/${p.of} ${p.requests}`) });
    const kept = await partitionDays(a.sql);
    expect(kept[0]).toBe(dayAgo(1));
    expect(first).toEqual({ days: kept.length, requests: 6000, from: dayAgo(1), to: kept.at(-1), notKept: [`${dayAgo(300)}…${dayAgo(2)}`], rolledUp: 1 });
    expect(progress).toContain(`${TODAY} 2/${kept.length} 3000`);
    const old = `WHERE day = '${dayAgo(200)}'`;
    expect(await a.sql.query(AGGREGATES(`WHERE day <> '${dayAgo(200)}'`))).toEqual(before);
    expect(await a.sql.query(AGGREGATES(old))).toHaveLength(1);
    await rebuildUsage(a.sql);
    await rebuildUsage(a.sql, { from: dayAgo(1), to: dayAgo(1) });
    expect(await a.sql.query(AGGREGATES(`WHERE day <> '${dayAgo(200)}'`))).toEqual(before);
    expect(await a.sql.query(RAW_SUMS)).toEqual(before);
    // The roll-ups follow usage_daily, the day of sums only included (from its sums).
    await expectRollupsExact(a, false);
    expect(await a.sql.query(`SELECT requests, billed_tokens::int AS billed FROM usage_day_users WHERE day = '${dayAgo(200)}'`)).toEqual([{ requests: 4, billed: 40 }]);
    // Its sums gone, its roll-ups go at the next rebuild.
    await a.sql.exec(`DELETE FROM usage_daily WHERE day = '${dayAgo(200)}'`);
    expect((await rebuildUsage(a.sql)).rolledUp).toBe(1);
    expect((await rebuildUsage(a.sql)).rolledUp).toBe(0);
    await expectRollupsExact(a);
  }, 60_000);

  it('a day past retention loses its partition, not its aggregates; stray rows move to their day', async () => {
    const ledger = ledgerOf(a);
    // Rows of a day that has no partition yet go to the default partition...
    for (const r of records('old', 300, [95, 40])) ledger.write(r);
    await ledger.close();
    expect(await a.sql.query('SELECT count(*)::int AS n FROM usage_records_default')).toEqual([{ n: 300 }]);
    const aggregates = await a.sql.query(AGGREGATES());
    // ...and the upkeep moves those still kept into their own day's, and drops what is past retention.
    const result = await maintainLedger(a.sql, config, NOW);
    expect(result).toMatchObject({ created: [dayAgo(40)], dropped: [], strayRowsDeleted: 150, aggregatesDeleted: 0 });
    expect(await a.sql.query(`SELECT count(*)::int AS n FROM ${partitionOf(dayAgo(40))}`)).toEqual([{ n: 150 }]);
    expect(await a.sql.query('SELECT count(*)::int AS n FROM usage_records_default')).toEqual([{ n: 0 }]);
    // 50 days later, the day 40 days ago is 90 days old: its partition goes whole, its sums stay.
    const later = NOW + 50 * DAY;
    const gone = await maintainLedger(a.sql, config, later);
    expect(gone.dropped).toEqual([dayAgo(40)]);
    expect(await a.sql.query(`SELECT to_regclass('${partitionOf(dayAgo(40))}') AS t`)).toEqual([{ t: null }]);
    expect(await a.sql.query(AGGREGATES())).toEqual(aggregates);
    await expectRollupsExact(a, false);
    // Aggregates go too once they are past theirs.
    const expired = await maintainLedger(a.sql, { retention_days: 90, aggregate_retention_days: 30 }, later);
    expect(expired.aggregatesDeleted).toBe(aggregates.filter((r) => String(r.day) < utcDay(later - 29 * DAY)).length);
    expect(await a.sql.query(AGGREGATES(`WHERE day < '${utcDay(later - 29 * DAY)}'`))).toEqual([]);
    // Their roll-ups went with them.
    for (const [table] of ROLLUPS) expect(await a.sql.query(`SELECT count(*)::int AS n FROM ${table} WHERE day < '${utcDay(later - 29 * DAY)}'`)).toEqual([{ n: 0 }]);
  }, 60_000);
});

describe('embedded', () => {
  let dir: string;
  let db: Database;
  beforeAll(async () => {
    dir = freshDataDir();
    db = await openDatabase({ dataDir: dir });
    await maintainLedger(db.sql, config, NOW);
  }, 60_000);
  afterAll(async () => {
    await db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('COPY batches and their replays: the aggregates equal the raw sums', async () => {
    const ledger = ledgerOf(db);
    const all = records('e', 2000, [0, 1, 5]);
    for (let i = 0; i < all.length; i += 500) {
      for (const r of all.slice(i, i + 500)) ledger.write(r);
      await ledger.flush();
    }
    // Replayed: COPY refuses the batch (its rows are there), the INSERT skips them and adds nothing.
    for (const r of all.slice(250, 1250)) ledger.write(r);
    await ledger.close();
    const raw = await db.sql.query(RAW_SUMS);
    expect(raw.reduce((n, r) => n + Number(r.requests), 0)).toBe(2000);
    expect(await db.sql.query(AGGREGATES())).toEqual(raw);
    await expectRollupsExact(db);
    const rebuilt = await rebuildUsage(db.sql);
    expect(rebuilt.requests).toBe(2000);
    expect(await db.sql.query(AGGREGATES())).toEqual(raw);
    await expectRollupsExact(db);
  }, 60_000);
});

/** The migrations older than `name` only: the schema as a release before it left it. */
async function applyMigrationsBefore(db: Awaited<ReturnType<typeof openDatabase>>, name: string): Promise<void> {
  const older = mkdtempSync(path.join(tmpdir(), 'mg-migrations-'));
  try {
    for (const m of readdirSync(migrationsDir).filter((m) => m < name)) cpSync(path.join(migrationsDir, m), path.join(older, m), { recursive: true });
    await applyMigrations(db.sql, older);
  } finally {
    rmSync(older, { recursive: true, force: true });
  }
}

it('the migration moves existing rows into day partitions and builds their aggregates', async () => {
  const pgdb = await freshPostgres();
  const db = await openDatabase({ databaseUrl: pgdb.url, dataDir: tmpdir(), migrate: false });
  try {
    // The migrations before this issue's, then rows in the old table's shape.
    await applyMigrationsBefore(db, '20261127163000');
    const rows = records('m', 1000, [0, 3, 120]);
    await db.sql.query(
      `INSERT INTO usage_records (request_id, api_key_id, user_id, model, endpoint, prompt_tokens, completion_tokens, cached_tokens, reasoning_tokens, surcharge_tokens, metered_unit, metered_quantity, billed_tokens, usage_source, status, created_at)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int[], $7::int[], $8::int[], $9::int[], $10::int[], $11::text[], $12::float8[], $13::bigint[], $14::text[], $15::int[], $16::timestamp(3)[])`,
      [
        rows.map((r) => r.requestId), rows.map((r) => r.apiKeyId), rows.map((r) => r.userId), rows.map((r) => r.model), rows.map((r) => r.endpoint),
        rows.map((r) => r.promptTokens), rows.map((r) => r.completionTokens), rows.map((r) => r.cachedTokens), rows.map((r) => r.reasoningTokens),
        rows.map((r) => r.surchargeTokens), rows.map((r) => r.meteredUnit), rows.map((r) => r.meteredQuantity), rows.map((r) => r.billedTokens),
        rows.map((r) => r.usageSource), rows.map((r) => r.status), rows.map((r) => r.createdAt),
      ],
    );
    const before = await db.sql.query(RAW_SUMS_BEFORE_COST);
    // This migration, and the ones after it: the rows of before have no cost (unpriced in their sums).
    expect((await applyMigrations(db.sql))[0]).toBe('20261127163000_usage_aggregates_and_partitions');
    expect(await partitionDays(db.sql)).toEqual([dayAgo(120), dayAgo(3), dayAgo(0)]);
    expect(await db.sql.query(RAW_SUMS_BEFORE_COST)).toEqual(before);
    const raw = (await db.sql.query(RAW_SUMS)) as { requests: number; unpriced: number; cost: string }[];
    expect(raw.every((r) => r.unpriced === r.requests && r.cost === '0')).toBe(true);
    expect(await db.sql.query(AGGREGATES())).toEqual(raw);
  } finally {
    await db.close();
    await pgdb.drop();
  }
}, 60_000);

it('the roll-ups migration fills usage_day_models and usage_day_users from usage_daily', async () => {
  const pgdb = await freshPostgres();
  const db = await openDatabase({ databaseUrl: pgdb.url, dataDir: tmpdir(), migrate: false });
  try {
    await applyMigrationsBefore(db, '20261129072335');
    // Sums as the release before wrote them: usage_daily only.
    const rows = records('r', 1500, [0, 1, 200, 5]);
    await db.sql.query(
      `INSERT INTO usage_daily (api_key_id, day, model, user_id, requests, errors, prompt_tokens, completion_tokens, cached_tokens, reasoning_tokens,
         surcharge_tokens, billed_tokens, cache_write_tokens, cache_write_1h_tokens, web_search_calls, cost, unpriced_requests)
       SELECT api_key_id, created_at::date, model, user_id, count(*), count(*) FILTER (WHERE status >= 400), sum(prompt_tokens), sum(completion_tokens),
              sum(cached_tokens), sum(reasoning_tokens), sum(surcharge_tokens), sum(billed_tokens), sum(cache_write_tokens), sum(cache_write_1h_tokens),
              sum(web_search_calls), coalesce(sum(cost), 0), count(*) FILTER (WHERE cost IS NULL)
       FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamp(3)[], $5::int[], $6::int[], $7::int[], $8::int[], $9::int[], $10::int[], $11::bigint[], $12::int[], $13::int[], $14::int[], $15::numeric[])
         AS r(api_key_id, user_id, model, created_at, status, prompt_tokens, completion_tokens, cached_tokens, reasoning_tokens, surcharge_tokens, billed_tokens,
              cache_write_tokens, cache_write_1h_tokens, web_search_calls, cost)
       GROUP BY 1, 2, 3, 4`,
      [
        rows.map((r) => r.apiKeyId), rows.map((r) => r.userId), rows.map((r) => r.model), rows.map((r) => r.createdAt), rows.map((r) => r.status),
        rows.map((r) => r.promptTokens), rows.map((r) => r.completionTokens), rows.map((r) => r.cachedTokens), rows.map((r) => r.reasoningTokens),
        rows.map((r) => r.surchargeTokens), rows.map((r) => r.billedTokens), rows.map((r) => r.cacheWriteTokens), rows.map((r) => r.cacheWrite1hTokens),
        rows.map((r) => r.webSearchCalls), rows.map((r) => r.cost),
      ],
    );
    expect(await applyMigrations(db.sql)).toContain('20261129072335_usage_day_rollups');
    await expectRollupsExact(db, false);
    expect(await db.sql.query(`SELECT count(*)::int AS n, sum(requests)::int AS requests FROM usage_day_models`)).toEqual([{ n: 12, requests: 1500 }]);
  } finally {
    await db.close();
    await pgdb.drop();
  }
}, 60_000);
