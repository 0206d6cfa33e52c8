// A batch writer's defence against one bad record (decision 0034): a batch the database refuses for
// what is in it is halved until each refused record stands alone, the others are written, and the
// refused ones are handed back to be set aside. A batch that failed for any other reason (the
// database away or busy, a deadlock, a schema an upgrade has not migrated yet, a driver's own
// error) is not split: it is thrown, to be retried whole later, so no record is set aside for a
// fault that is not its own.

/**
 * SQLSTATE classes of a refusal that is about the rows: data exceptions (a NUL, a number out of
 * range, invalid text), program limits (an index row too large). Not integrity constraints (23):
 * the writers' rows satisfy theirs by construction, and a partition's constraint can fail for a
 * moment while a partition is being made — that is retried, not set aside.
 */
const ROW_CLASSES = new Set(['22', '54']);

function sqlState(err: unknown, depth = 0): string | null {
  if (!err || typeof err !== 'object' || depth > 5) return null;
  const e = err as { code?: unknown; cause?: unknown; meta?: { driverAdapterError?: unknown } };
  if (typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code)) return e.code;
  return sqlState(e.cause, depth + 1) ?? sqlState(e.meta?.driverAdapterError, depth + 1);
}

/** Whether the database refused a write for what its rows hold (rather than for a fault of its own). */
export function isRowRefusal(err: unknown): boolean {
  const state = sqlState(err);
  return state !== null && ROW_CLASSES.has(state.slice(0, 2));
}

/**
 * Writes `rows` with `write`. A refusal for what the rows hold (`isRowRefusal`) halves the batch
 * until each failing row is alone, and each such row goes to `rejected` with its error; any other
 * failure is thrown (nothing was rejected for it), what was written before it staying written.
 * `written` is told of each part that was written. Resolves once every other row is written.
 */
export async function writeIsolating<T>(rows: T[], write: (rows: T[]) => Promise<void>, rejected: (row: T, err: unknown) => void, written: (rows: T[]) => void = () => {}): Promise<void> {
  if (!rows.length) return;
  try {
    await write(rows);
    written(rows);
  } catch (err) {
    if (!isRowRefusal(err)) throw err;
    if (rows.length === 1) return rejected(rows[0]!, err);
    const mid = rows.length >> 1;
    await writeIsolating(rows.slice(0, mid), write, rejected, written);
    await writeIsolating(rows.slice(mid), write, rejected, written);
  }
}
