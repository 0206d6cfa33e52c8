// Rows as CSV for COPY … FROM (FORMAT csv), the embedded database's bulk load: half the database's
// work per row of an INSERT … unnest, which matters because every request writes a row (the
// ledger's and the request log's).

/**
 * One value: strings always quoted (ids, names and paths may hold commas, quotes or newlines), NULL
 * unquoted and empty (so an empty string stays an empty string), times as ISO 8601.
 */
export function csvValue(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  if (v instanceof Date) return v.toISOString();
  const s = String(v);
  return `"${s.includes('"') ? s.replaceAll('"', '""') : s}"`;
}

/** The rows, one line each, with each column's value taken by its getter. */
export function csvRows<R>(rows: readonly R[], getters: readonly ((r: R) => unknown)[]): string {
  let out = '';
  for (const r of rows) {
    let line = '';
    for (let i = 0; i < getters.length; i++) line += (i ? ',' : '') + csvValue(getters[i]!(r));
    out += line + '\n';
  }
  return out;
}
