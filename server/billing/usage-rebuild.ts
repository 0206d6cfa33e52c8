// `model-gateway usage rebuild`: recomputes usage_daily from the raw rows, a day per transaction
// (after an upgrade, a repair, rows loaded by other tools). Idempotent: a day's sums are replaced,
// never added to; a day's roll-ups (usage_day_models, usage_day_users) are rebuilt with it. Days
// whose raw rows are no longer kept (past ledger.retention_days) keep their usage_daily rows, all
// that remains of them; their roll-ups are recomputed from those.
import type { SqlRunner } from '../db/migrate.ts';
import { addDays, partitionDays, strayDays } from './ledger-partitions.ts';
import { rebuildDay, rollUpDay, SUMS_TABLES } from './usage-aggregates.ts';

export type RebuildProgress = { day: string; n: number; of: number; requests: number; ms: number };
/** `rolledUp`: days without raw rows whose roll-ups were recomputed from their usage_daily rows. */
export type RebuildResult = { days: number; requests: number; from: string | null; to: string | null; notKept: string[]; rolledUp: number };

/** The days in [from, to] (inclusive; absent: no bound) that still have raw rows, and those that do not. */
async function daysToRebuild(sql: SqlRunner, from?: string, to?: string): Promise<{ kept: string[]; notKept: string[] }> {
  const covered = [...new Set([...(await partitionDays(sql)), ...(await strayDays(sql))])].sort();
  const inRange = (d: string) => (from === undefined || d >= from) && (to === undefined || d <= to);
  const kept = covered.filter(inRange);
  const notKept: string[] = [];
  // Asked-for days before the oldest kept one: said, so a rebuild never looks complete when it is not.
  if (from !== undefined && covered.length) {
    const end = to !== undefined && to < covered[0]! ? to : addDays(covered[0]!, -1);
    if (from <= end) notKept.push(from === end ? from : `${from}…${end}`);
  }
  return { kept, notKept };
}

export async function rebuildUsage(sql: SqlRunner, opts: { from?: string; to?: string; progress?: (p: RebuildProgress) => void } = {}): Promise<RebuildResult> {
  const { kept, notKept } = await daysToRebuild(sql, opts.from, opts.to);
  let requests = 0;
  for (const [i, day] of kept.entries()) {
    const started = Date.now();
    const results = await sql.transaction([...rebuildDay(day), { text: 'SELECT coalesce(sum(requests), 0)::bigint AS n FROM usage_daily WHERE day = $1::date', params: [day] }]);
    const n = Number(results.at(-1)?.[0]?.n ?? 0);
    requests += n;
    opts.progress?.({ day, n: i + 1, of: kept.length, requests: n, ms: Date.now() - started });
  }
  // Days in range without raw rows but with sums (or roll-ups): their roll-ups from their sums, a
  // day per transaction. Listed without the query time limit: two years of sums are many rows.
  const rebuilt = new Set(kept);
  const inRange = 'WHERE ($1::date IS NULL OR day >= $1::date) AND ($2::date IS NULL OR day <= $2::date)';
  const [summed = []] = await sql.transaction([
    {
      text: `SELECT to_char(day, 'YYYY-MM-DD') AS day FROM (${SUMS_TABLES.map((t) => `SELECT DISTINCT day FROM ${t} ${inRange}`).join(' UNION ')}) d ORDER BY 1`,
      params: [opts.from ?? null, opts.to ?? null],
    },
  ]);
  const summedOnly = summed.map((r) => String(r.day)).filter((d) => !rebuilt.has(d));
  for (const day of summedOnly) await sql.transaction(rollUpDay(day));
  return { days: kept.length, requests, from: kept[0] ?? null, to: kept.at(-1) ?? null, notKept, rolledUp: summedOnly.length };
}
