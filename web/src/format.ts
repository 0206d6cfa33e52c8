// Numbers, dates and durations as people read them; null is "unknown", never 0.
const int = new Intl.NumberFormat('en-US');
export const num = (n: number | null | undefined) => (n === null || n === undefined ? 'unknown' : int.format(n));
export const pct = (x: number | null | undefined, digits = 1) => (x === null || x === undefined ? 'no traffic' : `${(x * 100).toFixed(digits)}%`);

/** "2026-11-24 06:30 UTC": one timezone everywhere, the one quotas reset in. */
export function when(iso: string | number | null | undefined): string {
  if (iso === null || iso === undefined) return 'never';
  const d = typeof iso === 'number' ? new Date(iso * 1000) : new Date(iso);
  return `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** "5 h 03 min 12 s". */
export function duration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  if (h) return `${h} h ${String(m).padStart(2, '0')} min ${String(sec).padStart(2, '0')} s`;
  if (m) return `${m} min ${String(sec).padStart(2, '0')} s`;
  return `${sec} s`;
}

export const utcDay = (t: number) => new Date(t).toISOString().slice(0, 10);
export const DAY = 86_400_000;
