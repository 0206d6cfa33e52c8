import v8 from 'node:v8';
import { describe, expect, it } from 'vitest';
import { fullCollector, startIdleGc } from '../../server/runtime/idle-gc.ts';

const MB = 2 ** 20;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('idle collector', () => {
  it('collects once when the loop is idle and the heap grew, never when busy or unchanged', async () => {
    // The engine decides on its own when to collect, so the decisions are checked against a heap
    // and a loop whose readings the test sets.
    let heap = 100 * MB;
    let utilization = 0;
    let collections = 0;
    const collected: { beforeBytes: number; afterBytes: number }[] = [];
    const stop = startIdleGc({
      intervalMs: 20,
      minGrowthBytes: 32 * MB,
      probe: {
        heapBytes: () => heap,
        utilization: () => utilization,
        collect: () => {
          collections++;
          heap = 110 * MB;
        },
      },
      onCollect: (c) => collected.push(c),
    });
    try {
      await sleep(120); // idle, unchanged
      expect(collections).toBe(0);
      heap = 200 * MB;
      utilization = 0.5; // grown, but busy
      await sleep(120);
      expect(collections).toBe(0);
      utilization = 0.01; // grown and idle
      for (let waited = 0; collections === 0 && waited < 3000; waited += 20) await sleep(20);
      expect(collections).toBe(1);
      expect(collected).toEqual([{ beforeBytes: 200 * MB, afterBytes: 110 * MB, ms: expect.any(Number) }]);
      heap = 130 * MB; // idle, less than minGrowth above where the collection left it
      await sleep(120);
      expect(collections).toBe(1);
    } finally {
      stop();
    }
  });

  it('has the engine’s full collection, which returns a burst’s garbage', () => {
    const gc = fullCollector();
    expect(gc).toBeTypeOf('function');
    let garbage: { i: number; s: string }[] | null = [];
    for (let i = 0; i < 600_000; i++) garbage.push({ i, s: `item ${i}` });
    const burst = v8.getHeapStatistics().used_heap_size;
    garbage = null;
    gc!();
    gc!();
    expect(v8.getHeapStatistics().used_heap_size).toBeLessThan(burst - 30 * MB);
  });
});
