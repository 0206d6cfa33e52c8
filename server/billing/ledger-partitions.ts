// The ledger's raw rows live in a partition per UTC day of created_at (PostgreSQL's declarative
// partitioning, in PGlite as in a server; docs/decisions/0026-usage-aggregates-and-partitions.md).
// Every instance runs this upkeep at start and hourly, each step idempotent and safe beside another
// instance's: partitions are made ahead of time, a day past `ledger.retention_days` is dropped
// whole (its sums stay in usage_daily), and aggregates (usage_daily and its roll-ups) past
// `ledger.aggregate_retention_days` go.
import type { SqlRunner } from '../db/migrate.ts';
import type { Clock } from '../runtime/clock.ts';
import type { ResolvedConfig } from '../config/schema.ts';
import { isUtcDay, utcDay } from './plans.ts';
import { ROLLUPS } from './usage-aggregates.ts';

const DAY = 86_400_000;
/** Days ahead of today that have their partition before a row needs it. */
const AHEAD_DAYS = 7;
/** Serialises partition changes between instances (pg_advisory_xact_lock). */
const PARTITION_LOCK = 727074;

export const partitionOf = (day: string) => `usage_records_p${day.replaceAll('-', '')}`;
const dayOfPartition = (name: string) => /^usage_records_p(\d{4})(\d{2})(\d{2})$/.exec(name)?.slice(1).join('-') ?? null;
export const addDays = (day: string, n: number) => utcDay(Date.parse(day) + n * DAY);

/** The days that have a partition, oldest first. */
export async function partitionDays(sql: Pick<SqlRunner, 'query'>): Promise<string[]> {
  const rows = await sql.query(
    `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'usage_records'::regclass`,
  );
  return rows
    .map((r) => dayOfPartition(String(r.name)))
    .filter((d): d is string => d !== null)
    .sort();
}

/** Days that have rows in the default partition (no partition of their own yet), oldest first. */
export async function strayDays(sql: Pick<SqlRunner, 'query'>, from?: string): Promise<string[]> {
  const rows = await sql.query(
    `SELECT DISTINCT to_char(created_at, 'YYYY-MM-DD') AS day FROM usage_records_default ${from ? 'WHERE created_at >= $1::date' : ''} ORDER BY 1 LIMIT 1000`,
    from ? [from] : [],
  );
  return rows.map((r) => String(r.day));
}

/**
 * One day's partition, made unless it exists: a table of its own that takes the day's rows out of
 * the default partition, then attached (attaching checks that no row of the day is left there).
 */
function createPartition(day: string): string {
  if (!isUtcDay(day)) throw new Error(`not a UTC day: ${day}`);
  const name = partitionOf(day);
  const next = addDays(day, 1);
  return `DO $$ BEGIN
    PERFORM pg_advisory_xact_lock(${PARTITION_LOCK});
    IF to_regclass('${name}') IS NULL THEN
      CREATE TABLE ${name} (LIKE usage_records INCLUDING DEFAULTS);
      WITH moved AS (DELETE FROM usage_records_default WHERE created_at >= '${day}' AND created_at < '${next}' RETURNING *)
        INSERT INTO ${name} SELECT * FROM moved;
      ALTER TABLE usage_records ATTACH PARTITION ${name} FOR VALUES FROM ('${day}') TO ('${next}');
    END IF;
  END $$`;
}

/** Makes the partitions of `days` that do not exist yet; returns those it made. */
export async function ensurePartitions(sql: SqlRunner, days: string[]): Promise<string[]> {
  const have = new Set(await partitionDays(sql));
  const made: string[] = [];
  for (const day of days) {
    if (have.has(day)) continue;
    await sql.transaction([{ text: createPartition(day) }]);
    made.push(day);
  }
  return made;
}

export type MaintenanceResult = { created: string[]; dropped: string[]; strayRowsDeleted: number; aggregatesDeleted: number };

/** One pass of the upkeep at `now`. */
export async function maintainLedger(sql: SqlRunner, config: ResolvedConfig['ledger'], now: number): Promise<MaintenanceResult> {
  const today = utcDay(now);
  const keepFrom = addDays(today, -config.retention_days + 1);
  // Rows that reached the default partition (a replayed record of a day without a partition) go to
  // their own day's; then today's neighbours, so the next writes never need the default one.
  const wanted = [...(await strayDays(sql, keepFrom))];
  for (let d = -1; d <= AHEAD_DAYS; d++) wanted.push(addDays(today, d));
  const created = await ensurePartitions(sql, [...new Set(wanted)].filter((d) => d >= keepFrom).sort());

  const dropped: string[] = [];
  for (const day of await partitionDays(sql)) {
    if (day >= keepFrom) break;
    // A day's partition goes whole: no row-by-row delete, no table to vacuum. The lock wait is
    // bounded so a long reader delays it to the next pass rather than stalling the ledger's writes.
    await sql.transaction([{ text: `SET LOCAL lock_timeout = '5s'` }, { text: `DROP TABLE IF EXISTS ${partitionOf(day)}` }]);
    dropped.push(day);
  }
  const strayRowsDeleted = await deleteInBatches(sql, 'usage_records_default', 'created_at < $1::date', keepFrom);
  const keepSumsFrom = addDays(today, -config.aggregate_retention_days + 1);
  const aggregatesDeleted = await deleteInBatches(sql, 'usage_daily', 'day < $1::date', keepSumsFrom);
  // Their roll-ups with them (usage-aggregates.ts); the count is usage_daily's rows.
  for (const { table } of ROLLUPS) await deleteInBatches(sql, table, 'day < $1::date', keepSumsFrom);
  return { created, dropped, strayRowsDeleted, aggregatesDeleted };
}

/**
 * Deletes the rows of `table` that match `where` (on `$1`), 10,000 a transaction, each waiting
 * at most 5 s for its locks, so no pass holds locks long or stalls the ledger's writes.
 */
async function deleteInBatches(sql: SqlRunner, table: string, where: string, value: string): Promise<number> {
  const batch = 10_000;
  let total = 0;
  for (;;) {
    const [, rows] = await sql.transaction([
      { text: `SET LOCAL lock_timeout = '5s'` },
      {
        text: `WITH gone AS (DELETE FROM ${table} WHERE ctid IN (SELECT ctid FROM ${table} WHERE ${where} LIMIT ${batch}) RETURNING 1) SELECT count(*)::int AS n FROM gone`,
        params: [value],
      },
    ]);
    const n = Number(rows?.[0]?.n ?? 0);
    total += n;
    if (n < batch) return total;
  }
}

/** Runs the upkeep now and every hour until closed; a failed pass is reported and tried again at the next. */
export class LedgerMaintenance {
  private readonly timer: NodeJS.Timeout;
  private running: Promise<void> | null = null;

  constructor(
    private readonly sql: SqlRunner,
    private readonly config: ResolvedConfig['ledger'],
    private readonly clock: Clock,
    private readonly report: { done(r: MaintenanceResult): void; failed(err: unknown): void },
    everyMs = 3_600_000,
  ) {
    this.timer = setInterval(() => void this.run(), everyMs);
    this.timer.unref();
  }

  run(): Promise<void> {
    this.running ??= maintainLedger(this.sql, this.config, this.clock.now())
      .then((r) => this.report.done(r), (err) => this.report.failed(err))
      .finally(() => (this.running = null));
    return this.running;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }
}
