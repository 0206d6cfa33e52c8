// With Redis configured, BullMQ brings due jobs to a worker at once: here the database poll is
// off (an hour apart), so a job that finishes, or is re-checked on time, went through the queue.
import type { FastifyInstance } from 'fastify';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { randomToken } from '../../server/runtime/secrets.ts';
import { TEST_REDIS_URL, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { jobTestConfig, jobTestRoutes, runs, testKind } from './fixtures/test-kind.ts';

const prefix = `mgtest:${randomToken(6)}:`;
let gw: TestGateway;
let app: FastifyInstance;
let base: string;
beforeAll(async () => {
  gw = await startTestGateway({ config: jobTestConfig, jobKinds: [testKind], env: { REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: prefix, JOB_POLL_MS: '3600000' } });
  app = jobTestRoutes(gw.services);
  base = await app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await app?.close();
  await gw?.close();
  const r = new Redis(TEST_REDIS_URL);
  const keys = await r.keys(`${prefix}*`);
  if (keys.length) await r.del(...keys);
  r.disconnect();
});

const submit = (key: string, body: object) => fetch(`${base}/test/jobs`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
async function finished(key: string, id: string): Promise<any> {
  for (let n = 0; n < 100; n++) {
    const job: any = await (await fetch(`${base}/test/jobs/${id}`, { headers: { authorization: `Bearer ${key}` } })).json();
    if (job.status === 'done' || job.status === 'failed') return job;
    await sleep(30);
  }
  throw new Error('job did not finish');
}

it('runs submitted jobs and delayed re-checks through the queue, each once', async () => {
  expect(gw.services.jobRunner.queue.kind).toBe('bullmq');
  const key = await gw.newKey();
  const started = Date.now();
  const jobs: any[] = await Promise.all([submit(key, { text: 'a' }), submit(key, { recheck: true }), submit(key, { images: 2 })].map(async (r) => (await r).json()));
  const done = await Promise.all(jobs.map((j) => finished(key, j.id)));
  expect(done.map((j) => j.status)).toEqual(['done', 'done', 'done']);
  expect(done[1].result).toEqual({ created: 1, state: { operation: 'op-1' } });
  expect(Date.now() - started).toBeLessThan(2500);
  // The re-checked job ran twice (first call, then the delayed check), the others once.
  expect(jobs.map((j) => runs.filter((id) => id === j.id).length)).toEqual([1, 2, 1]);
});
