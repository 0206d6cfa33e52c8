// Which of a budget's alert thresholds one settlement crossed: exactly, at every settlement, cheaply.

/** The thresholds (percent) that `before → after` crossed: before < t% × limit ≤ after, exactly. */
export function crossedThresholds(thresholds: readonly number[], limitNano: number, beforeNano: number, afterNano: number): number[] {
  if (![limitNano, beforeNano, afterNano].every(Number.isFinite) || limitNano <= 0 || afterNano <= beforeNano) return [];
  // Runs at every settlement: a threshold clearly outside (before, after] is told apart in floating
  // point; only one near it (a crossing, or a near miss) is decided exactly, in integers.
  const above = afterNano * 100 * (1 + 1e-9);
  const below = beforeNano * 100 * (1 - 1e-9);
  let exact: { limit: bigint; before: bigint; after: bigint } | undefined;
  return thresholds.filter((t) => {
    const x = limitNano * t;
    if (x > above || x < below) return false;
    exact ??= { limit: BigInt(Math.round(limitNano)), before: BigInt(Math.round(beforeNano)) * 100n, after: BigInt(Math.round(afterNano)) * 100n };
    const at = exact.limit * BigInt(t);
    return exact.before < at && at <= exact.after;
  });
}
