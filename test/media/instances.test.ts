// Images and video on two gateway instances sharing PostgreSQL, Redis and an S3-compatible store
// (issue 18): an image made on one is fetched from the other's hosted URL; jobs submitted on one
// are polled on the other, whichever instance runs them, billed once.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { randomToken } from '../../server/runtime/secrets.ts';
import { TEST_REDIS_URL, freshPostgres, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { startS3 } from '../helpers/s3.ts';
import { MP4, PNG, mediaConfig, startFakeMedia, type FakeMedia } from './fake-media.ts';

let fake: FakeMedia;
let db: Awaited<ReturnType<typeof freshPostgres>>;
let s3: Awaited<ReturnType<typeof startS3>>;
let a: TestGateway;
let b: TestGateway;
let key: string;

beforeAll(async () => {
  fake = await startFakeMedia();
  s3 = await startS3();
  db = await freshPostgres();
  const env = { DATABASE_URL: db.url, REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: `mgtest:${randomToken(6)}:`, GATEWAY_SECRET: randomToken(32), JOB_POLL_MS: '50', ...s3.env };
  a = await startTestGateway({ config: mediaConfig(fake.url), env });
  b = await startTestGateway({ config: mediaConfig(fake.url), env });
  key = await a.newKey();
}, 60_000);
afterAll(async () => {
  await a?.close().catch(() => {});
  await b?.close();
  await db?.drop();
  await s3?.close();
  await fake?.close();
});

const onOther = (url: string, gw: TestGateway) => gw.url + new URL(url).pathname;
const poll = async (gw: TestGateway, id: string): Promise<any> => {
  const end = Date.now() + 15_000;
  for (;;) {
    const job: any = await (await gw.fetch(`/v1/images/generations/${id}`, { key })).json();
    if (job.status === 'done' || job.status === 'failed' || Date.now() > end) return job;
    await sleep(50);
  }
};
const bytes = async (url: string) => Buffer.from(await (await fetch(url)).arrayBuffer());

it('an image made on one instance is served from the shared store by the other', async () => {
  const res = await a.fetch('/v1/images/generations', { method: 'POST', key, json: { model: 'gpt-image-1', prompt: 'p' } });
  expect(res.status).toBe(200);
  const url: string = ((await res.json()) as any).data[0].url;
  expect(url.startsWith(a.url)).toBe(true);
  expect(await bytes(onOther(url, b))).toEqual(PNG);
});

it('jobs submitted on one instance are polled on the other; the hosted video is served by both; billed once', async () => {
  const image: any = await (await a.fetch('/v1/images/generations', { method: 'POST', key, json: { model: 'nano-banana-pro', prompt: 'p', sync: false } })).json();
  const video: any = await (await b.fetch('/v1/images/generations', { method: 'POST', key, json: { model: 'veo', prompt: 'waves' } })).json();
  const imageDone = await poll(b, image.id);
  const videoDone = await poll(a, video.id);
  expect(imageDone.status).toBe('done');
  expect(videoDone).toMatchObject({ status: 'done', result: { data: [{ content_type: 'video/mp4', duration_seconds: 2 }] } });
  expect(imageDone.result.data[0].url.startsWith(b.url)).toBe(true);
  expect(await bytes(imageDone.result.data[0].url)).toEqual(PNG);
  expect(await bytes(videoDone.result.data[0].url)).toEqual(MP4);
  expect(await bytes(onOther(videoDone.result.data[0].url, b))).toEqual(MP4);
  await a.services.ledger.flush();
  await b.services.ledger.flush();
  const rows = await a.services.db.prisma.usageRecord.findMany({ where: { requestId: { in: [image.id, video.id] } }, orderBy: { endpoint: 'asc' } });
  expect(rows.map((r) => [r.endpoint, Number(r.billedTokens)])).toEqual([
    ['images', 1128],
    ['video', 2000],
  ]);
});

it('a synchronous request turned job (524) is finished by the other instance when its own stops; billed once', async () => {
  const res = await a.fetch('/v1/images/generations', { method: 'POST', key, json: { model: 'gpt-image-1', prompt: 'slow:2500 patient' } });
  expect(res.status).toBe(524);
  const id: string = ((await res.json()) as any).error.job_id;
  await a.close(); // aborts the work and hands its lease back
  const done = await poll(b, id);
  expect(done.status).toBe('done');
  expect(await bytes(done.result.data[0].url)).toEqual(PNG);
  await b.services.ledger.flush();
  const rows = await b.services.db.prisma.usageRecord.findMany({ where: { requestId: id } });
  expect(rows.map((r) => Number(r.billedTokens))).toEqual([2212]);
  expect(fake.requests.filter((r) => r.json?.prompt === 'slow:2500 patient')).toHaveLength(2);
}, 30_000);
