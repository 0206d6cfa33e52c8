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

// ---- Money ------------------------------------------------------------------------------------
// The API gives US dollars as exact decimal strings ("0.00005", "12.3400"). They are shown from the
// strings themselves (rounded in decimal, never through a float), and parsed with Number() only to
// plot them.

const DECIMAL = /^(-?)(\d*)(?:\.(\d*))?$/;

/** The decimal without superfluous zeros ("0.000050000" → "0.00005", "12.0" → "12"): still exact. */
export function decimalText(v: string): string {
  const m = DECIMAL.exec(v.trim());
  if (!m || (!m[2] && !m[3])) return v;
  const int = m[2]!.replace(/^0+(?=\d)/, '') || '0';
  const frac = (m[3] ?? '').replace(/0+$/, '');
  const sign = m[1] && (int !== '0' || frac) ? '-' : '';
  return `${sign}${int}${frac ? `.${frac}` : ''}`;
}

/**
 * "$12.34", "$1,234.50", "$0.0123", "$0.00005": whole dollars and more with cents; less than a
 * dollar with three significant digits (at least two decimals, at most nine: nano-dollars). null is
 * "—" (no known price), never $0 or NaN.
 */
export function usd(v: string | null | undefined): string {
  if (v === null || v === undefined) return '—';
  const m = DECIMAL.exec(v.trim());
  if (!m || (!m[2] && !m[3])) return `$${v}`;
  const int = m[2]!.replace(/^0+/, '');
  const frac = m[3] ?? '';
  const first = frac.search(/[1-9]/);
  /** Rounded half up to `decimals`, in decimal: the digits without the point. */
  const rounded = (decimals: number) => {
    const n = BigInt((int || '0') + frac.padEnd(decimals, '0').slice(0, decimals));
    return ((frac[decimals] ?? '0') >= '5' ? n + 1n : n).toString().padStart(decimals + 1, '0');
  };
  let decimals = int ? 2 : first < 0 ? 2 : Math.min(9, Math.max(2, first + 3));
  let digits = rounded(decimals);
  // 0.999999 rounds to a whole dollar: then it is shown with cents.
  if (decimals > 2 && !/^0+$/.test(digits.slice(0, -decimals))) digits = rounded((decimals = 2));
  const sign = m[1] && /[1-9]/.test(int + frac) ? '-' : '';
  // Less than the smallest amount shown, but not nothing.
  if (/^0+$/.test(digits) && first >= 0) return `${sign ? '>-' : '<'}$0.000000001`;
  const whole = (digits.slice(0, -decimals).replace(/^0+(?=\d)/, '') || '0').replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  // Below a dollar, zeros after the significant digits say nothing ("$0.00005", not "$0.0000500").
  let cents = digits.slice(-decimals);
  if (whole === '0') cents = cents.replace(/0+$/, '').padEnd(2, '0');
  return `${sign}$${whole}.${cents}`;
}

/** A plotted amount (a float: axis ticks, stacked sums) in the same form. */
export const usdOf = (n: number) => (Number.isFinite(n) ? usd(n.toFixed(9)) : '—');

/** For plotting only: the dollars of a decimal string, 0 for null. */
export const dollars = (v: string | null | undefined) => (v === null || v === undefined ? 0 : Number(v) || 0);
