// The ledger summed per API key, UTC day and model (`usage_daily`), and those sums rolled up per
// day and model and per day and user (`usage_day_models`, `usage_day_users`): what every usage read
// reads (docs/decisions/0026-usage-aggregates-and-partitions.md, 0036-usage-roll-ups-per-day.md).
// The sums are added in the statement (or the transaction) that writes the raw rows, from the rows
// it actually wrote, so a batch retried after its first attempt committed, or a segment replayed
// after a crash, adds nothing twice; and an upsert adds under the row's lock, so writers on N
// instances add up exactly.
import type { SqlStatement } from '../db/migrate.ts';
import { ZERO, usdText, type Money } from './prices.ts';

/**
 * What a ledger record must carry to be summed (LedgerRecord is this and more). The bucket fields
 * beside the totals, and the cost (US dollars, a decimal string; null: a price it needed is
 * unknown), are absent in records of segments written before they existed (replayed after an
 * upgrade): 0, and no cost.
 */
export type AggregatedRecord = {
  apiKeyId: string;
  userId: string;
  model: string;
  /** ISO 8601 UTC: its first ten characters are the day. */
  createdAt: string;
  status: number;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  reasoningTokens: number;
  surchargeTokens: number;
  billedTokens: number;
  meteredUnit?: string | null;
  meteredQuantity?: number | null;
  cacheWriteTokens?: number;
  cacheWrite1hTokens?: number;
  audioInputTokens?: number;
  imageInputTokens?: number;
  audioOutputTokens?: number;
  imageOutputTokens?: number;
  webSearchCalls?: number;
  cost?: string | null;
};

/**
 * Counts usage_daily keeps as the plain sum of the raw column of the same name, and the record's
 * field for it (absent in records written before the field existed: 0).
 */
export const SUMMED_COUNTS = [
  ['prompt_tokens', 'promptTokens'],
  ['completion_tokens', 'completionTokens'],
  ['cached_tokens', 'cachedTokens'],
  ['reasoning_tokens', 'reasoningTokens'],
  ['billed_tokens', 'billedTokens'],
  ['cache_write_tokens', 'cacheWriteTokens'],
  ['cache_write_1h_tokens', 'cacheWrite1hTokens'],
  ['audio_input_tokens', 'audioInputTokens'],
  ['image_input_tokens', 'imageInputTokens'],
  ['audio_output_tokens', 'audioOutputTokens'],
  ['image_output_tokens', 'imageOutputTokens'],
  ['web_search_calls', 'webSearchCalls'],
] as const satisfies readonly (readonly [string, keyof AggregatedRecord])[];

/**
 * An aggregate column, its SQL type, what it sums over a group of raw rows, and one record's share
 * (a decimal string for `numeric` columns: money is summed in decimal, never in floats).
 */
const sums: [column: string, type: string, over: string, of: (r: AggregatedRecord) => number | string][] = [
  ['requests', 'integer', 'count(*)', () => 1],
  ['errors', 'integer', 'count(*) FILTER (WHERE status >= 400)', (r) => (r.status >= 400 ? 1 : 0)],
  ...SUMMED_COUNTS.map(([column, field]): (typeof sums)[number] => [column, 'bigint', `sum(${column})`, (r) => (r[field] as number | undefined) ?? 0]),
  ['surcharge_tokens', 'bigint', 'sum(surcharge_tokens)', (r) => r.surchargeTokens],
  ['metered_quantity', 'double precision', 'coalesce(sum(metered_quantity) FILTER (WHERE metered_unit IS NOT NULL), 0)', (r) => (r.meteredUnit ? (r.meteredQuantity ?? 0) : 0)],
  ['cost', 'numeric', 'coalesce(sum(cost), 0)', (r) => r.cost ?? '0'],
  ['unpriced_requests', 'integer', 'count(*) FILTER (WHERE cost IS NULL)', (r) => (r.cost == null ? 1 : 0)],
];

/** The raw columns the sums read (a source relation must have these). */
export const aggregatedColumns = [
  'api_key_id',
  'user_id',
  'model',
  'created_at',
  'status',
  ...SUMMED_COUNTS.map(([column]) => column),
  'surcharge_tokens',
  'metered_unit',
  'metered_quantity',
  'cost',
];

type Column = [name: string, type: string];
type Sum = (typeof sums)[number];

/**
 * A table of sums: usage_daily, or one of its roll-ups. Each is keyed by its group columns and
 * holds its sums (usage_daily also its metered unit, the max over its rows).
 */
type SumsTable = { table: string; group: Column[]; sums: Sum[]; meteredUnit: boolean };

const daily: SumsTable = {
  table: 'usage_daily',
  group: [
    ['api_key_id', 'text'],
    ['day', 'date'],
    ['model', 'text'],
    ['user_id', 'text'],
  ],
  sums,
  meteredUnit: true,
};
/**
 * usage_daily summed again per day and model and per day and user: what the operators' report reads
 * (admin-usage.ts), a row per model or user a day instead of one per key, model and user a day.
 * Every sum but the metered quantity, whose unit is a model's and which no report of them shows.
 */
const rollupSums = sums.filter(([c]) => c !== 'metered_quantity');
export const ROLLUPS: SumsTable[] = [
  { table: 'usage_day_models', group: [['day', 'date'], ['model', 'text']], sums: rollupSums, meteredUnit: false },
  { table: 'usage_day_users', group: [['day', 'date'], ['user_id', 'text']], sums: rollupSums, meteredUnit: false },
];
/** Every table of sums, in the order a writer locks their rows: usage_daily first. */
export const SUMS_TABLES = [daily, ...ROLLUPS].map((t) => t.table);

/** usage_daily's columns in the order its rows are built: the group, the sums, the metered unit. */
const dailyColumns: Column[] = [...daily.group, ...sums.map(([c, type]): Column => [c, type]), ['metered_unit', 'text']];

/**
 * Adds the rows of `source` (a SELECT giving one row per group, in `t`'s columns) to `t`, in key
 * order: two writers that touch the same groups lock them in the same order and never deadlock.
 */
function upsert(t: SumsTable, source: string): string {
  const columns = [...t.group.map(([c]) => c), ...t.sums.map(([c]) => c), ...(t.meteredUnit ? ['metered_unit'] : [])];
  return `INSERT INTO ${t.table} (${columns.join(', ')})
    ${source} ORDER BY ${t.group.map((_, i) => i + 1).join(', ')}
    ON CONFLICT (${t.group.map(([c]) => c).join(', ')}) DO UPDATE SET
      ${[...t.sums.map(([c]) => `${c} = ${t.table}.${c} + excluded.${c}`), ...(t.meteredUnit ? [`metered_unit = coalesce(excluded.metered_unit, ${t.table}.metered_unit)`] : [])].join(', ')}`;
}

/** A roll-up's rows from a relation with usage_daily's columns (the sums of a roll-up are sums of usage_daily's). */
const rolledUp = (t: SumsTable, from: string, where = '') =>
  `SELECT ${t.group.map(([c]) => c).join(', ')}, ${t.sums.map(([c]) => `sum(${c})`).join(', ')} FROM ${from} ${where} GROUP BY ${t.group.map((_, i) => i + 1).join(', ')}`;

/**
 * One statement that adds `groups` (a SELECT giving usage_daily rows to add, in `dailyColumns`)
 * to usage_daily and then to each roll-up, after `before` (CTEs `groups` reads: the ledger's
 * INSERT … RETURNING). Each upsert starts once the one before it has finished (its source waits
 * on the previous one's count, an InitPlan run before its first row), so every writer locks
 * usage_daily's rows, then the models', then the users', each in key order: no two writers wait on
 * each other in a circle. The rows to add are computed once (a materialised CTE).
 */
function addGroups(groups: string, before?: string): string {
  const ctes = [...(before ? [before] : []), `daily_groups (${dailyColumns.map(([c]) => c).join(', ')}) AS MATERIALIZED (${groups})`];
  let previous = 'daily_added';
  ctes.push(`daily_added AS (${upsert(daily, 'SELECT * FROM daily_groups')} RETURNING 1)`);
  const last = ROLLUPS.length - 1;
  const statements = ROLLUPS.map((t, i) => {
    const statement = upsert(t, rolledUp(t, 'daily_groups', `WHERE (SELECT count(*) FROM ${previous}) >= 0`));
    previous = `${t.table}_added`;
    return i < last ? `${previous} AS (${statement} RETURNING 1)` : statement;
  });
  return `WITH ${[...ctes, ...statements.slice(0, last)].join(',\n')}\n${statements[last]}`;
}

/** The raw rows of `source` grouped into usage_daily's rows. */
const groupsOf = (source: string) =>
  `SELECT api_key_id, created_at::date, model, user_id, ${sums.map(([, , over]) => over).join(', ')}, max(metered_unit) FROM ${source} GROUP BY 1, 2, 3, 4`;

/**
 * The statement that adds the raw rows of `source` (a relation with `aggregatedColumns`) to their
 * days, in usage_daily and its roll-ups; `before`: the CTE that makes `source`, if any (the
 * ledger's `ins AS (INSERT … RETURNING …)`).
 */
export function addToDaily(source: string, before?: string): string {
  return addGroups(groupsOf(source), before);
}

/**
 * The statement that adds `records` to their days, summed here per group and sent as one array
 * per column: the embedded database parses every array element it is sent, and a batch's groups
 * are far fewer than its rows (sending the rows for SQL to group cost 12.6 µs a row, this ~5.6).
 */
export function addRecordsToDaily(records: AggregatedRecord[]): SqlStatement {
  const groups = new Map<string, unknown[]>();
  const unit = dailyColumns.length - 1;
  const first = daily.group.length;
  for (const r of records) {
    const day = r.createdAt.slice(0, 10);
    const id = `${r.apiKeyId}\n${day}\n${r.model}\n${r.userId}`;
    let row = groups.get(id);
    if (!row) groups.set(id, (row = [r.apiKeyId, day, r.model, r.userId, ...sums.map(([, type]) => (type === 'numeric' ? ZERO : 0)), null]));
    for (let j = 0; j < sums.length; j++) {
      const k = first + j;
      const share = sums[j]![3](r);
      row[k] = typeof share === 'string' ? (row[k] as Money).plus(share) : (row[k] as number) + share;
    }
    // max(metered_unit), as the SQL sums take it.
    if (r.meteredUnit && (row[unit] === null || r.meteredUnit > (row[unit] as string))) row[unit] = r.meteredUnit;
  }
  const rows = [...groups.values()].map((row) => row.map((v) => (typeof v === 'object' && v !== null ? usdText(v as Money) : v)));
  return {
    text: addGroups(`SELECT * FROM unnest(${dailyColumns.map(([, type], j) => `$${j + 1}::${type}[]`).join(', ')})`),
    params: dailyColumns.map((_, j) => rows.map((r) => r[j])),
  };
}

/**
 * Writers take ROW EXCLUSIVE on usage_daily; this mode conflicts with it and with itself. A day's
 * rebuild holds it from before it reads the raw rows until it commits: every batch that committed
 * before is in what it reads, and every batch after adds to what it wrote.
 */
const EXCLUDE_WRITERS = 'LOCK TABLE usage_daily IN SHARE ROW EXCLUSIVE MODE';

/** Statements that recompute one UTC day (YYYY-MM-DD) from its raw rows, to run as one transaction. */
export function rebuildDay(day: string): SqlStatement[] {
  return [
    { text: EXCLUDE_WRITERS },
    ...SUMS_TABLES.map((table) => ({ text: `DELETE FROM ${table} WHERE day = $1::date`, params: [day] })),
    {
      text: addToDaily(`usage_records WHERE created_at >= $1::date AND created_at < $1::date + 1`),
      params: [day],
    },
  ];
}

/**
 * Statements that recompute one day's roll-ups from its usage_daily rows, to run as one
 * transaction: for a day whose raw rows are no longer kept, its sums are all that remains.
 */
export function rollUpDay(day: string): SqlStatement[] {
  return [
    { text: EXCLUDE_WRITERS },
    ...ROLLUPS.flatMap((t) => [
      { text: `DELETE FROM ${t.table} WHERE day = $1::date`, params: [day] },
      { text: upsert(t, rolledUp(t, 'usage_daily', 'WHERE day = $1::date')), params: [day] },
    ]),
  ];
}
