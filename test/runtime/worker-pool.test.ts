// The primary's supervision (server/runtime/cluster.ts) with stand-in workers: a worker that dies is
// replaced in its slot; workers that keep failing at start-up make the primary give up (exit code
// 1) instead of looping; a stop ends every worker and resolves with 0.
import cluster from 'node:cluster';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeAll, expect, it } from 'vitest';
import { WorkerPool } from '../../server/runtime/cluster.ts';

type Said = { level: string; msg: string; fields: Record<string, unknown> };
const said: Said[] = [];
const at = (level: string) => (a: unknown, b?: string) => void said.push(typeof a === 'string' ? { level, msg: a, fields: {} } : { level, msg: b ?? '', fields: a as Record<string, unknown> });
const log = { info: at('info'), warn: at('warn'), error: at('error'), fatal: at('fatal') };

beforeAll(() => {
  cluster.setupPrimary({ exec: path.join(import.meta.dirname, 'fixtures/cluster-worker.mjs'), args: [], silent: true });
});
afterEach(() => {
  said.length = 0;
});

it('workers that keep failing at start-up: three in a row, then the primary stops with exit code 1', async () => {
  process.env.MG_TEST_WORKER = 'fail';
  const started = Date.now();
  const code = await new WorkerPool({ count: 2, log, stopLimitMs: 5_000 }).run();
  expect(code).toBe(1);
  expect(said.filter((s) => s.msg.includes('starting')).length).toBe(3);
  expect(said.find((s) => s.level === 'fatal')?.msg).toMatch(/exited before serving \(code 1\): 3 workers in a row failed at start-up, so no new one is started; stopping/);
  // Two at once, the third after the first backoff (250 or 500 ms): no loop.
  expect(Date.now() - started).toBeLessThan(5_000);
});

it('a worker that dies is replaced in its slot after a backoff; a stop ends them all with exit code 0', async () => {
  process.env.MG_TEST_WORKER = 'serve';
  const serving: number[] = [];
  const pool = new WorkerPool({ count: 2, log, stopLimitMs: 5_000, onServing: (_url, n) => serving.push(n) });
  const done = pool.run();
  while (pool.serving < 2) await sleep(20);
  const victim = said.find((s) => s.msg.startsWith('worker 2 (pid') && s.msg.includes('ready'))!.fields.worker_pid as number;
  process.kill(victim, 'SIGKILL');
  while (!said.some((s) => s.msg.startsWith('worker 2 (pid') && s.msg.includes('ready') && s.fields.worker_pid !== victim)) await sleep(20);
  expect(said.find((s) => s.level === 'error')?.msg).toBe(`worker 2 (pid ${victim}) exited unexpectedly (signal SIGKILL); a new worker 2 starts in 250 ms`);
  // The count serving, as the primary writes it to server.json: up, down with the death, up again.
  expect(serving).toEqual([1, 2, 1, 2]);
  pool.stop();
  expect(await done).toBe(0);
  expect(said.filter((s) => /^worker \d \(pid \d+\) stopped \(code 0\)$/.test(s.msg)).length).toBe(2);
});
