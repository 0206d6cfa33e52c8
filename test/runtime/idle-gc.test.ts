import v8 from 'node:v8';
import { describe, expect, it } from 'vitest';
import { startIdleGc } from '../../server/runtime/idle-gc.ts';

const used = () => v8.getHeapStatistics().used_heap_size;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('idle collector', () => {
  it('returns a burst of garbage once the process is idle, and leaves a busy or unchanged heap alone', async () => {
    const collections: { beforeBytes: number; afterBytes: number }[] = [];
    const stop = startIdleGc({ intervalMs: 100, minGrowthBytes: 16 * 2 ** 20, onCollect: (c) => collections.push(c) });
    try {
      // Idle with an unchanged heap: nothing to return.
      await sleep(350);
      expect(collections).toHaveLength(0);

      // A burst that leaves ~50 MB of garbage behind, keeping the loop busy while it lasts.
      let garbage: { i: number; s: string }[] | null = [];
      for (let i = 0; i < 600_000; i++) garbage.push({ i, s: `item ${i}` });
      const burst = used();
      garbage = null;
      expect(collections).toHaveLength(0);

      for (let waited = 0; collections.length === 0 && waited < 3000; waited += 50) await sleep(50);
      expect(collections).toHaveLength(1);
      expect(collections[0]!.afterBytes).toBeLessThan(burst - 30 * 2 ** 20);

      // Once settled, idleness alone does not collect again.
      await sleep(350);
      expect(collections).toHaveLength(1);
    } finally {
      stop();
    }
  });
});
