// The ledger summed per API key, UTC day and model (`usage_daily`): what every usage read reads
// (docs/decisions/0026-usage-aggregates-and-partitions.md). The sums are added in the statement (or
// the transaction) that writes the raw rows, from the rows it actually wrote, so a batch retried
// after its first attempt committed, or a segment replayed after a crash, adds nothing twice; and
// an upsert adds under the row's lock, so writers on N instances add up exactly.
import type { SqlQueryable } from '../db/migrate.ts';

/** An aggregate column, what it sums over one group of raw rows, and how a new sum joins the old. */
const sums: [column: string, over: string][] = [
  ['requests', 'count(*)'],
  ['errors', 'count(*) FILTER (WHERE status >= 400)'],
  ['prompt_tokens', 'sum(prompt_tokens)'],
  ['completion_tokens', 'sum(completion_tokens)'],
  ['cached_tokens', 'sum(cached_tokens)'],
  ['reasoning_tokens', 'sum(reasoning_tokens)'],
  ['surcharge_tokens', 'sum(surcharge_tokens)'],
  ['billed_tokens', 'sum(billed_tokens)'],
  ['metered_quantity', 'coalesce(sum(metered_quantity) FILTER (WHERE metered_unit IS NOT NULL), 0)'],
];

/** The raw columns the sums read (a source relation must have these). */
export const aggregatedColumns = [
  'api_key_id',
  'user_id',
  'model',
  'created_at',
  'status',
  'prompt_tokens',
  'completion_tokens',
  'cached_tokens',
  'reasoning_tokens',
  'surcharge_tokens',
  'billed_tokens',
  'metered_unit',
  'metered_quantity',
] as const;

const groupColumns = 'api_key_id, day, model, user_id';
const selectGroups = `api_key_id, created_at::date, model, user_id, ${sums.map(([, over]) => over).join(', ')}, max(metered_unit)`;

/**
 * The statement that adds the raw rows of `source` (a relation with `aggregatedColumns`) to their
 * days. Groups are upserted in key order, so two writers that touch the same groups lock them in
 * the same order and never deadlock.
 */
export function addToDaily(source: string): string {
  return `INSERT INTO usage_daily (${groupColumns}, ${sums.map(([c]) => c).join(', ')}, metered_unit)
    SELECT ${selectGroups} FROM ${source}
    GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
    ON CONFLICT (${groupColumns}) DO UPDATE SET
      ${sums.map(([c]) => `${c} = usage_daily.${c} + excluded.${c}`).join(', ')},
      metered_unit = coalesce(excluded.metered_unit, usage_daily.metered_unit)`;
}

/**
 * Writers take ROW EXCLUSIVE on usage_daily; this mode conflicts with it and with itself. A day's
 * rebuild holds it from before it reads the raw rows until it commits: every batch that committed
 * before is in what it reads, and every batch after adds to what it wrote.
 */
const EXCLUDE_WRITERS = 'LOCK TABLE usage_daily IN SHARE ROW EXCLUSIVE MODE';

/** Statements that recompute one UTC day (YYYY-MM-DD) from its raw rows, to run as one transaction. */
export function rebuildDay(day: string): { text: string; params?: unknown[] }[] {
  return [
    { text: EXCLUDE_WRITERS },
    { text: 'DELETE FROM usage_daily WHERE day = $1::date', params: [day] },
    {
      text: addToDaily(`usage_records WHERE created_at >= $1::date AND created_at < $1::date + 1`),
      params: [day],
    },
  ];
}

/** Deletes aggregates of days before `before` (YYYY-MM-DD), at most `batch` rows a statement. */
export async function deleteAggregatesBefore(sql: SqlQueryable, before: string, batch = 10_000): Promise<number> {
  let total = 0;
  for (;;) {
    const rows = await sql.query(
      `WITH gone AS (DELETE FROM usage_daily WHERE ctid IN (SELECT ctid FROM usage_daily WHERE day < $1::date LIMIT $2) RETURNING 1) SELECT count(*)::int AS n FROM gone`,
      [before, batch],
    );
    const n = Number(rows[0]?.n ?? 0);
    total += n;
    if (n < batch) return total;
  }
}
