// The median latency of /v1/models/status from known histograms (bounds 50, 100, 250, 500 ms, 1,
// 2.5, 5, 10, 30 s, then open): interpolated inside its bucket, never above the largest latency.
import { expect, it } from 'vitest';
import { p50 } from '../../server/catalog/health-report.ts';
import { LATENCY_BOUNDS, emptyHist } from '../../server/routing/health.ts';

/** The histogram, sum and maximum of these latencies, as the health recorder keeps them. */
function of(...ms: number[]) {
  const hist = emptyHist();
  for (const m of ms) {
    const i = LATENCY_BOUNDS.findIndex((b) => m <= b);
    hist[i < 0 ? LATENCY_BOUNDS.length : i]!++;
  }
  return { hist, latencySum: ms.reduce((a, b) => a + b, 0), latencyMax: Math.max(...ms) };
}

it('no attempts: null', () => {
  expect(p50({ hist: emptyHist(), latencySum: 0, latencyMax: 0 })).toBeNull();
});

it('fast attempts all in the first bucket report their mean, not the 50 ms bound', () => {
  expect(p50(of(2, 3, 3, 4))).toBe(3);
  expect(p50(of(3))).toBe(3);
});

it('interpolates inside the bucket holding the median', () => {
  // 80 | 120 | 900: the median (rank 1.5) is halfway through the 100–250 ms bucket.
  expect(p50(of(80, 120, 900))).toBe(175);
  // Four of ten in 50–100 ms, six in 100–250 ms (max 160): rank 5 is a sixth into 100–160.
  expect(p50(of(60, 60, 70, 80, 110, 120, 130, 140, 150, 160))).toBe(110);
});

it('the bucket top is capped at the largest latency seen', () => {
  // 10 and 20 ms (first bucket), 300 ms: rank 1.5 in the 0–50 bucket capped at max 300 → stays inside 0–50.
  expect(p50(of(10, 20, 300))).toBe(37.5);
  // The median in a bucket whose bound is above the max: 260 and 270 ms in 250–500 ms, read as 250–270.
  expect(p50(of(40, 260, 270))).toBe(255);
});

it('never above the maximum, also in the open last bucket', () => {
  const h = of(31_000, 40_000, 45_000);
  expect(p50(h)).toBeLessThanOrEqual(45_000);
  // Past the last bound (30 s) the bucket ends at the maximum: a quarter into 30–45 s.
  expect(p50(of(40_000, 45_000, 10))).toBe(33_750);
});
