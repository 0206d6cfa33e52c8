// A batch writer's defence against one bad record (decision 0034): a batch the database refuses for
// what is in it is halved until each refused record stands alone, the others are written, and the
// refused ones are handed back to be set aside. A batch that failed because the database is away or
// busy is not split: it is thrown, to be retried whole later.
import { isDatabaseUnavailable } from './unavailable.ts';

/**
 * SQLSTATE classes of a failure that says nothing about the rows: transaction rollback (deadlock,
 * serialization), insufficient resources (disk full), object not in prerequisite state (lock not
 * available), operator intervention, system and internal errors.
 */
const TRANSIENT_CLASSES = new Set(['40', '53', '55', '57', '58', 'XX']);

function sqlState(err: unknown, depth = 0): string | null {
  if (!err || typeof err !== 'object' || depth > 5) return null;
  const e = err as { code?: unknown; cause?: unknown; meta?: { driverAdapterError?: unknown } };
  if (typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code)) return e.code;
  return sqlState(e.cause, depth + 1) ?? sqlState(e.meta?.driverAdapterError, depth + 1);
}

/** Whether a failed write should be tried again whole (an outage, a deadlock) rather than split. */
export function isTransientWriteFailure(err: unknown): boolean {
  if (isDatabaseUnavailable(err)) return true;
  const state = sqlState(err);
  return state !== null && TRANSIENT_CLASSES.has(state.slice(0, 2));
}

/**
 * Writes `rows` with `write`. A failure that `isTransientWriteFailure` is thrown (nothing was
 * rejected); any other halves the batch until each failing row is alone, and each such row goes
 * to `rejected` with its error. Resolves once every other row is written.
 */
export async function writeIsolating<T>(rows: T[], write: (rows: T[]) => Promise<void>, rejected: (row: T, err: unknown) => void): Promise<void> {
  if (!rows.length) return;
  try {
    await write(rows);
  } catch (err) {
    if (isTransientWriteFailure(err)) throw err;
    if (rows.length === 1) return rejected(rows[0]!, err);
    const mid = rows.length >> 1;
    await writeIsolating(rows.slice(0, mid), write, rejected);
    await writeIsolating(rows.slice(mid), write, rejected);
  }
}
