// V8 grows its heap under load (thousands of concurrent streams keep objects alive long enough to
// be promoted) and does not shrink it afterwards: its memory reducer waits for idle notifications
// that Node never sends, so a gateway stayed hundreds of MB above its resting size for good after
// one burst. This does what the memory reducer would: once the process has been idle for a while
// and the heap is well above where the last full collection left it, collect once.
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
};

/**
 * The engine's full collection, exposed for this context only (as jest's leak detector does). Called
 * without options: on Node 20's V8 an options object makes it skip most of the garbage.
 */
function fullCollector(): (() => void) | null {
  try {
    v8.setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as unknown;
    return typeof gc === 'function' ? (gc as () => void) : null;
  } catch {
    return null;
  }
}

const heapBytes = () => v8.getHeapStatistics().used_heap_size;

/** Starts the idle collector; returns its stop function (a no-op where the engine refuses). */
export function startIdleGc(opts: IdleGcOptions = {}): () => void {
  const gc = fullCollector();
  if (!gc) return () => {};
  const idleUtilization = opts.idleUtilization ?? 0.05;
  const minGrowth = opts.minGrowthBytes ?? 32 * 2 ** 20;
  let settled = heapBytes();
  let lastElu = performance.eventLoopUtilization();
  const timer = setInterval(() => {
    const elu = performance.eventLoopUtilization();
    const busy = performance.eventLoopUtilization(elu, lastElu).utilization > idleUtilization;
    const before = heapBytes();
    lastElu = elu;
    if (busy || before < settled + minGrowth) return;
    const t0 = performance.now();
    // Twice: the first frees the objects, but their pages (and the Buffers they held) are let go
    // only once sweeping and finalisers have run, which the second collection completes.
    gc();
    gc();
    settled = heapBytes();
    opts.onCollect?.({ beforeBytes: before, afterBytes: settled, ms: performance.now() - t0 });
  }, opts.intervalMs ?? 2_000);
  timer.unref();
  return () => clearInterval(timer);
}
