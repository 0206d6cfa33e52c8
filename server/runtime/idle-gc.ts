// V8 grows its heap under load (thousands of concurrent streams keep objects alive long enough to
// be promoted) and does not shrink it afterwards: its memory reducer waits for idle notifications
// that Node never sends, so a gateway stayed hundreds of MB above its resting size for good after
// one burst. This does what the memory reducer would: once the process has been idle for a while
// and the heap is well above the size the last full collection left, collect (and compact) once.
import { performance } from 'node:perf_hooks';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';

export type IdleGcOptions = {
  /** How often to look; idleness is judged over one such interval. */
  intervalMs?: number;
  /** Event-loop utilisation at or below which the interval counts as idle. */
  idleUtilization?: number;
  /** Growth of the heap above its size after the last full collection that is worth returning. */
  minGrowthBytes?: number;
  onCollect?: (info: { beforeBytes: number; afterBytes: number; ms: number }) => void;
  /** What it measures and does (the engine's by default; tests pass their own). */
  probe?: IdleGcProbe;
};

export type IdleGcProbe = {
  /** The heap's size now. */
  heapBytes(): number;
  /** Event-loop utilisation since the previous call (0..1). */
  utilization(): number;
  /** A full collection. */
  collect(): void;
};

/**
 * The engine's full collection, exposed for this context only (as jest's leak detector does). Called
 * without options: on Node 20's V8 an options object makes it skip most of the garbage.
 */
export function fullCollector(): (() => void) | null {
  try {
    v8.setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as unknown;
    return typeof gc === 'function' ? (gc as () => void) : null;
  } catch {
    return null;
  }
}

/** The engine's own measurements and collector; null where the engine refuses to expose `gc`. */
function engineProbe(): IdleGcProbe | null {
  const gc = fullCollector();
  if (!gc) return null;
  let lastElu = performance.eventLoopUtilization();
  return {
    // Committed, not used: what a burst leaves behind is pages V8 keeps for later, mostly free.
    heapBytes: () => v8.getHeapStatistics().total_heap_size,
    utilization() {
      const elu = performance.eventLoopUtilization();
      const u = performance.eventLoopUtilization(elu, lastElu).utilization;
      lastElu = elu;
      return u;
    },
    // Twice: the first frees the objects, but their pages (and the Buffers they held) are let go
    // only once sweeping and finalisers have run, which the second collection completes. Compacting:
    // a burst leaves old-space pages with a few live objects each, which only moving them frees.
    collect() {
      v8.setFlagsFromString('--compact-on-every-full-gc');
      try {
        gc();
        gc();
      } finally {
        v8.setFlagsFromString('--no-compact-on-every-full-gc');
      }
    },
  };
}

/** Starts the idle collector; returns its stop function (a no-op where the engine refuses). */
export function startIdleGc(opts: IdleGcOptions = {}): () => void {
  const probe = opts.probe ?? engineProbe();
  if (!probe) return () => {};
  const idleUtilization = opts.idleUtilization ?? 0.05;
  const minGrowth = opts.minGrowthBytes ?? 16 * 2 ** 20;
  let settled = probe.heapBytes();
  probe.utilization();
  const timer = setInterval(() => {
    const busy = probe.utilization() > idleUtilization;
    const before = probe.heapBytes();
    if (busy || before < settled + minGrowth) return;
    const t0 = performance.now();
    probe.collect();
    settled = probe.heapBytes();
    opts.onCollect?.({ beforeBytes: before, afterBytes: settled, ms: performance.now() - t0 });
  }, opts.intervalMs ?? 2_000);
  timer.unref();
  return () => clearInterval(timer);
}
