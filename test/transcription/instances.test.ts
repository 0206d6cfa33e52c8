// Transcription jobs on two instances sharing PostgreSQL, Redis and an S3-compatible store (issue
// 20): the upload is stored by the instance that took it, the job runs wherever it is claimed, and
// the other instance answers its status and download.
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { randomToken } from '../../server/runtime/secrets.ts';
import { TEST_REDIS_URL, freshPostgres, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { startS3 } from '../helpers/s3.ts';
import { sttConfig, startFakeStt, whisperAnswer, type FakeStt } from './fake-stt.ts';

let fake: FakeStt;
let db: Awaited<ReturnType<typeof freshPostgres>>;
let s3: Awaited<ReturnType<typeof startS3>>;
let a: TestGateway;
let b: TestGateway;

beforeAll(async () => {
  fake = await startFakeStt();
  s3 = await startS3();
  db = await freshPostgres();
  const env = { DATABASE_URL: db.url, REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: `mgtest:${randomToken(6)}:`, GATEWAY_SECRET: randomToken(32), JOB_POLL_MS: '50', ...s3.env };
  a = await startTestGateway({ config: sttConfig(fake.url), env });
  b = await startTestGateway({ config: sttConfig(fake.url), env });
}, 60_000);
afterAll(async () => {
  await a?.close();
  await b?.close();
  await db?.drop();
  await s3?.close();
  await fake?.close();
});

it('submitted on one instance, polled and downloaded on the other; the upload deleted once transcribed; billed once', async () => {
  const key = await a.newKey();
  const wav = readFileSync(new URL('../fixtures/audio/speech.wav', import.meta.url));
  const form = new FormData();
  form.set('model', 'whisper-1');
  form.set('response_format', 'vtt');
  form.set('file', new Blob([wav]), 'speech.wav');
  const res = await a.fetch('/v1/audio/transcriptions/jobs', { method: 'POST', key, body: form });
  expect(res.status).toBe(202);
  const job: any = await res.json();
  const { upload } = (await b.services.db.prisma.job.findUniqueOrThrow({ where: { id: job.id } })).request as any;
  let status: any;
  for (let i = 0; i < 300; i++) {
    status = await (await b.fetch(`/v1/audio/transcriptions/jobs/${job.id}/status`, { key })).json();
    if (status.status === 'done' || status.status === 'failed') break;
    await sleep(50);
  }
  expect(status).toMatchObject({ status: 'done', result: { content_type: 'text/vtt; charset=utf-8' } });
  const vtt = await (await b.fetch(`/v1/audio/transcriptions/jobs/${job.id}/download`, { key })).text();
  expect(vtt).toBe(
    'WEBVTT\n\n00:00:00.120 --> 00:00:01.400\nHello from the gateway.\n\n00:00:01.620 --> 00:00:03.500\nThis is a test of speech to text.\n\n00:00:03.900 --> 00:00:04.600\nGoodbye.\n',
  );
  expect(fake.requests.at(-1)!.file!.bytes).toEqual(wav);
  expect(await a.services.jobs.blobs.get(upload.where.blob)).toBeNull();
  await a.services.ledger.flush();
  await b.services.ledger.flush();
  const rows = await a.services.db.prisma.usageRecord.findMany({ where: { requestId: job.id } });
  // whisper-1 reports 5 s: 0.0833 minutes × 1000 tokens, rounded up.
  expect(rows.map((r) => [r.endpoint, r.meteredUnit, Number(r.billedTokens)])).toEqual([['transcriptions', 'audio_minute', 84]]);
  expect(whisperAnswer.usage.seconds).toBe(5);
}, 30_000);
