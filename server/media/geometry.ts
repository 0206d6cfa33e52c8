// Sizes and aspect ratios: what a client asked for, mapped to the nearest an upstream accepts.
// Nearness is judged on the logarithm of the ratio (16:9 is as far from 1:1 as 9:16), then on area.

export type Dimensions = { w: number; h: number };

const gcd = (a: number, b: number): number => (b ? gcd(b, a % b) : a);

export const parseRatio = (s: string): Dimensions => {
  const [w, h] = s.split(':').map(Number) as [number, number];
  return { w, h };
};
export const parsePixels = (s: string): Dimensions => {
  const [w, h] = s.split('x').map(Number) as [number, number];
  return { w, h };
};
export const pixels = (d: Dimensions) => `${d.w}x${d.h}`;
/** `1920x1080` → `16:9`. */
export const ratio = (d: Dimensions) => {
  const g = gcd(d.w, d.h) || 1;
  return `${d.w / g}:${d.h / g}`;
};

const logRatio = (d: Dimensions) => Math.log(d.w / d.h);

/** The allowed ratio (`W:H`) nearest to `d`'s. */
export function nearestRatio(d: Dimensions, allowed: readonly string[]): string {
  let best = allowed[0]!;
  let bestDistance = Infinity;
  for (const a of allowed) {
    const distance = Math.abs(logRatio(parseRatio(a)) - logRatio(d));
    if (distance < bestDistance - 1e-9) [best, bestDistance] = [a, distance];
  }
  return best;
}

/**
 * The allowed pixel size (`WxH`) nearest to `d`: the closest ratio first, then the closest area.
 * For a bare ratio (no pixel count), `d` carries the ratio at a 1024×1024-like area.
 */
export function nearestSize(d: Dimensions, allowed: readonly string[]): string {
  let best = allowed[0]!;
  let bestKey = [Infinity, Infinity];
  for (const a of allowed) {
    const p = parsePixels(a);
    const key = [Math.round(Math.abs(logRatio(p) - logRatio(d)) * 1000), Math.abs(Math.log((p.w * p.h) / (d.w * d.h)))];
    if (key[0]! < bestKey[0]! || (key[0] === bestKey[0] && key[1]! < bestKey[1]! - 1e-9)) [best, bestKey] = [a, key];
  }
  return best;
}

/** A ratio as pixels of about one megapixel (1024×1024's area), for upstreams that take pixel sizes. */
export function ratioAsPixels(r: Dimensions): Dimensions {
  const area = 1024 * 1024;
  const w = Math.sqrt((area * r.w) / r.h);
  return { w: Math.round(w), h: Math.round(area / w) };
}

/** The value of `allowed` nearest to `n` (ties: the larger). */
export function nearestOf(n: number, allowed: readonly number[]): number {
  return allowed.reduce((best, v) => (Math.abs(v - n) < Math.abs(best - n) || (Math.abs(v - n) === Math.abs(best - n) && v > best) ? v : best));
}
