// The PostgreSQL blob store (decision 0020): bytes in 1 MiB chunk rows, a blob never seen half
// written (its replacement neither), a failed or abandoned write leaves nothing behind, a delete
// removes every chunk — and a 24 MB upload into a job through it keeps the gateway's memory bounded.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHUNK_BYTES, PostgresBlobStore } from '../../server/blobs/postgres.ts';
import { openDatabase } from '../../server/db/client.ts';
import { freshPostgres, pollJob, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { sttConfig, startFakeStt, type FakeStt } from '../transcription/fake-stt.ts';

const MiB = 1024 * 1024;
let db: Awaited<ReturnType<typeof freshPostgres>>;
let sql: pg.Client;
let store: PostgresBlobStore;
let dir: string;

beforeAll(async () => {
  db = await freshPostgres();
  dir = mkdtempSync(path.join(tmpdir(), 'mg-pgblobs-'));
  await (await openDatabase({ databaseUrl: db.url, dataDir: dir })).close();
  store = await PostgresBlobStore.open(db.url, { connectMs: 2_000, queryMs: 5_000 });
  sql = new pg.Client({ connectionString: db.url });
  await sql.connect();
}, 60_000);
afterAll(async () => {
  await sql?.end();
  await store?.close();
  await db?.drop();
  rmSync(dir, { recursive: true, force: true });
});

const rows = async (q: string, params: unknown[] = []) => (await sql.query(q, params)).rows;
const chunksOf = async (key: string) =>
  (await rows('SELECT c.seq, length(c.data) AS bytes FROM blob_chunks c JOIN blobs b ON b.version = c.version WHERE b.key = $1 ORDER BY c.seq', [key])).map((r) => [r.seq, r.bytes]);
const versionOf = async (key: string) => (await rows('SELECT version FROM blobs WHERE key = $1', [key]))[0]?.version as string | undefined;
const text = async (key: string) => {
  const got = await store.get(key);
  return got ? Buffer.concat(await got.body.toArray()).toString() : null;
};

describe('chunks', () => {
  it('a blob is stored in 1 MiB rows whatever the sizes written, and read back whole; delete removes every chunk', async () => {
    // 2.5 MiB written in odd pieces: 700 KiB, 1.3 MiB, 512 KiB.
    const bytes = Buffer.alloc(2.5 * MiB);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7) % 256;
    const pieces = [bytes.subarray(0, 700 * 1024), bytes.subarray(700 * 1024, 2 * MiB), bytes.subarray(2 * MiB)];
    expect(await store.put('jobs/job_chunks/output', Readable.from(pieces), 'application/octet-stream')).toEqual({ size: 2.5 * MiB, contentType: 'application/octet-stream' });
    expect(CHUNK_BYTES).toBe(MiB);
    expect(await chunksOf('jobs/job_chunks/output')).toEqual([
      [0, MiB],
      [1, MiB],
      [2, MiB / 2],
    ]);
    const got = (await store.get('jobs/job_chunks/output'))!;
    expect(Buffer.concat(await got.body.toArray()).equals(bytes)).toBe(true);
    const version = await versionOf('jobs/job_chunks/output');
    await store.delete('jobs/job_chunks/output');
    expect(await rows('SELECT count(*)::int AS n FROM blob_chunks WHERE version = $1', [version])).toEqual([{ n: 0 }]);
    expect(await store.get('jobs/job_chunks/output')).toBeNull();
  });

  it('an empty blob has no chunk and reads as empty', async () => {
    expect(await store.put('jobs/job_empty/output', Readable.from([]), 'text/plain')).toEqual({ size: 0, contentType: 'text/plain' });
    expect(await chunksOf('jobs/job_empty/output')).toEqual([]);
    expect(await text('jobs/job_empty/output')).toBe('');
    await store.delete('jobs/job_empty/output');
  });
});

describe('a reader never sees a blob half written', () => {
  it('while a put is under way: a new key is absent, a replaced one is the previous blob, whole; after it, the new one, and the old chunks are gone', async () => {
    await store.put('jobs/job_swap/output', Readable.from([Buffer.from('the old blob')]), 'text/plain');
    const oldVersion = await versionOf('jobs/job_swap/output');
    const fresh = new PassThrough();
    const replacing = new PassThrough();
    const puts = [store.put('jobs/job_new/output', fresh, 'text/plain'), store.put('jobs/job_swap/output', replacing, 'text/plain')];
    // 2 MiB each: two chunk rows are stored, the write goes on.
    fresh.write(Buffer.alloc(2 * MiB, 110));
    replacing.write(Buffer.alloc(2 * MiB, 110));
    for (let i = 0; i < 100 && Number((await rows('SELECT count(*)::int AS n FROM blob_chunks'))[0].n) < 4; i++) await sleep(50);
    expect((await rows('SELECT count(*)::int AS n FROM blob_writes'))[0].n).toBe(2);
    expect(await store.get('jobs/job_new/output')).toBeNull();
    expect(await store.stat('jobs/job_new/output')).toBeNull();
    expect(await text('jobs/job_swap/output')).toBe('the old blob');
    fresh.end('!');
    replacing.end('!');
    expect(await Promise.all(puts)).toEqual([
      { size: 2 * MiB + 1, contentType: 'text/plain' },
      { size: 2 * MiB + 1, contentType: 'text/plain' },
    ]);
    expect(await store.stat('jobs/job_swap/output')).toEqual({ size: 2 * MiB + 1, contentType: 'text/plain' });
    expect((await text('jobs/job_swap/output'))!.endsWith('nn!')).toBe(true);
    expect(await rows('SELECT count(*)::int AS n FROM blob_chunks WHERE version = $1', [oldVersion])).toEqual([{ n: 0 }]);
    expect(await rows('SELECT count(*)::int AS n FROM blob_writes')).toEqual([{ n: 0 }]);
    await store.delete('jobs/job_new/output');
    await store.delete('jobs/job_swap/output');
  });

  it('a body that fails part-way: the put rejects with its error, the previous blob stays, no chunk is left', async () => {
    await store.put('jobs/job_fail/output', Readable.from([Buffer.from('kept')]), 'text/plain');
    const before = (await rows('SELECT count(*)::int AS n FROM blob_chunks'))[0].n;
    const body = new PassThrough();
    const put = store.put('jobs/job_fail/output', body, 'text/plain');
    body.write(Buffer.alloc(1.5 * MiB, 1));
    await sleep(200);
    body.destroy(new Error('the client went away'));
    await expect(put).rejects.toThrow('the client went away');
    expect(await text('jobs/job_fail/output')).toBe('kept');
    expect(await rows('SELECT count(*)::int AS n FROM blob_chunks')).toEqual([{ n: before }]);
    expect(await rows('SELECT count(*)::int AS n FROM blob_writes')).toEqual([{ n: 0 }]);
    await store.delete('jobs/job_fail/output');
  });

  it('a read whose blob is deleted part-way ends in an error, never in a short body taken for the whole', async () => {
    await store.put('jobs/job_gone/output', Readable.from([Buffer.alloc(3 * MiB, 2)]), 'application/octet-stream');
    const got = (await store.get('jobs/job_gone/output'))!;
    const first = await new Promise<Buffer>((resolve) => got.body.once('data', resolve));
    got.body.pause();
    expect(first.length).toBe(MiB);
    await store.delete('jobs/job_gone/output');
    got.body.resume();
    await expect(got.body.toArray()).rejects.toThrow(/^blob jobs\/job_gone\/output was replaced or deleted while it was read \(\d+ of 3145728 bytes sent\)$/);
  });
});

describe('abandoned writes', () => {
  it('sweep removes a write whose process died (no chunk for an hour) with its chunks, and leaves a live one', async () => {
    await sql.query("INSERT INTO blob_writes (version, touched_at) VALUES ('deadwrite', now() - interval '61 minutes'), ('livewrite', now() - interval '59 minutes')");
    await sql.query("INSERT INTO blob_chunks (version, seq, data) VALUES ('deadwrite', 0, '\\x01'), ('deadwrite', 1, '\\x02'), ('livewrite', 0, '\\x03')");
    expect(await store.sweep()).toBe(1);
    expect(await rows('SELECT version, seq FROM blob_chunks ORDER BY version, seq')).toEqual([{ version: 'livewrite', seq: 0 }]);
    expect(await rows('SELECT version FROM blob_writes')).toEqual([{ version: 'livewrite' }]);
    await sql.query("DELETE FROM blob_chunks WHERE version = 'livewrite'");
    await sql.query("DELETE FROM blob_writes WHERE version = 'livewrite'");
  });

  it('a write taken for abandoned (its registration swept) fails when it completes, and publishes nothing', async () => {
    const body = new PassThrough();
    const put = store.put('jobs/job_swept/output', body, 'text/plain');
    body.write(Buffer.alloc(MiB, 3));
    for (let i = 0; i < 100 && !(await rows('SELECT 1 FROM blob_chunks c JOIN blob_writes w USING (version)')).length; i++) await sleep(50);
    await sql.query("UPDATE blob_writes SET touched_at = now() - interval '2 hours'");
    expect(await store.sweep()).toBe(1);
    body.end('late');
    await expect(put).rejects.toThrow('blob jobs/job_swept/output: the write was abandoned before it completed (no chunk stored for 60 minutes)');
    expect(await store.get('jobs/job_swept/output')).toBeNull();
    expect(await rows('SELECT count(*)::int AS n FROM blob_chunks c LEFT JOIN blobs b USING (version) WHERE b.key IS NULL')).toEqual([{ n: 0 }]);
  });
});

describe('through a gateway', () => {
  let fake: FakeStt;
  let gw: TestGateway;
  let gwDb: Awaited<ReturnType<typeof freshPostgres>>;
  beforeAll(async () => {
    fake = await startFakeStt();
    gwDb = await freshPostgres();
    // DATABASE_URL, no S3 or BLOB_DIR: the blobs go to PostgreSQL. Without Redis and with this poll
    // interval, no job runs unless the test runs it.
    gw = await startTestGateway({ config: sttConfig(fake.url), env: { DATABASE_URL: gwDb.url, JOB_POLL_MS: '3600000' } });
  }, 60_000);
  afterAll(async () => {
    await gw?.close();
    await gwDb?.drop();
    await fake?.close();
  });

  it('a 24 MB upload into a job streams through PostgreSQL in 24 chunks; the gateway holds a few MiB of it at most', async () => {
    expect(gw.services.jobs.blobs.kind).toBe('postgresql');
    const key = await gw.newKey();
    const WAV = readFileSync(new URL('../fixtures/audio/speech.wav', import.meta.url));
    // The client is another process (its buffers are not counted here) sending 24 MiB: a WAV
    // header, then zeros, 1 MiB at a time.
    const client = `
      const boundary = '----mgtest';
      const head = Buffer.concat([
        Buffer.from('--' + boundary + '\\r\\nContent-Disposition: form-data; name="model"\\r\\n\\r\\nwhisper-1\\r\\n--' + boundary + '\\r\\n'),
        Buffer.from('Content-Disposition: form-data; name="file"; filename="long.wav"\\r\\nContent-Type: audio/wav\\r\\n\\r\\n'),
      ]);
      const first = Buffer.alloc(1024 * 1024);
      Buffer.from(process.argv[3], 'base64').copy(first);
      const zeros = Buffer.alloc(1024 * 1024);
      let n = 0;
      const body = new ReadableStream({ pull(c) {
        if (n === 0) c.enqueue(head);
        if (n === 24) { c.enqueue(Buffer.from('\\r\\n--' + boundary + '--\\r\\n')); return c.close(); }
        c.enqueue(n++ === 0 ? first : zeros);
      } });
      fetch(process.argv[1], { method: 'POST', headers: { authorization: 'Bearer ' + process.argv[2], 'content-type': 'multipart/form-data; boundary=' + boundary }, body, duplex: 'half' })
        .then(async (r) => console.log(JSON.stringify({ status: r.status, body: await r.json() })), (e) => console.log(JSON.stringify({ error: String(e.cause?.code ?? e) })));
    `;
    // What is held, not what awaits collection: read after two full collections, all along. After
    // one, the Buffers it freed may still be counted (V8 releases them on a background thread, late
    // on a busy machine: 12.2 MB read once in CI); the second completes that release.
    const held = () => {
      global.gc!();
      global.gc!();
      return process.memoryUsage().arrayBuffers;
    };
    const before = held();
    let peak = 0;
    const sampler = setInterval(() => {
      peak = Math.max(peak, held() - before);
    }, 50);
    const { stdout } = await promisify(execFile)(process.execPath, ['-e', client, `${gw.url}/v1/audio/transcriptions/jobs`, key, WAV.subarray(0, 44).toString('base64')], { encoding: 'utf8' });
    clearInterval(sampler);
    const r = JSON.parse(stdout);
    expect(r.status).toBe(202);
    const row = await gw.services.db.prisma.job.findUniqueOrThrow({ where: { id: r.body.id } });
    const blob = (row.request as { upload: { where: { blob: string }; size: number } }).upload;
    expect(blob.size).toBe(24 * MiB);
    expect(await gw.services.jobs.blobs.stat(blob.where.blob)).toEqual({ size: 24 * MiB, contentType: 'audio/wav' });
    const client2 = new pg.Client({ connectionString: gwDb.url });
    await client2.connect();
    try {
      const chunks = (await client2.query('SELECT c.seq, length(c.data) AS bytes FROM blob_chunks c JOIN blobs b USING (version) WHERE b.key = $1 ORDER BY seq', [blob.where.blob])).rows;
      expect(chunks.map((c) => [c.seq, c.bytes])).toEqual(Array.from({ length: 24 }, (_, i) => [i, MiB]));
    } finally {
      await client2.end();
    }
    // Busboy's buffers, one chunk gathered, the one being written and pg's copy of it: a few MiB,
    // not the upload (the bound leaves room for other work in this process).
    expect(peak, `array buffers peaked ${peak} bytes above the start`).toBeLessThan(10 * MiB);
    // A full collection every 50 ms slows the upload down several times over.
  }, 120_000);

  it('a job whose upload is gone fails with job_input_missing and the id it was logged under; no upstream is called, nothing billed', async () => {
    const key = await gw.newKey();
    const form = new FormData();
    form.set('model', 'whisper-1');
    form.set('file', new Blob([readFileSync(new URL('../fixtures/audio/speech.wav', import.meta.url))]), 'speech.wav');
    const res = await gw.fetch('/v1/audio/transcriptions/jobs', { method: 'POST', key, body: form });
    expect(res.status).toBe(202);
    const job: any = await res.json();
    const row = await gw.services.db.prisma.job.findUniqueOrThrow({ where: { id: job.id } });
    // What an instance that cannot see the upload finds.
    await gw.services.jobs.blobs.delete((row.request as { upload: { where: { blob: string } } }).upload.where.blob);
    fake.requests.length = 0;
    // This job alone (the 24 MB one above stays queued).
    await gw.services.jobRunner.runById(job.id);
    const failed = await pollJob(gw, `/v1/audio/transcriptions/jobs/${job.id}/status`, key);
    expect(failed.status).toBe('failed');
    expect(failed.error).toEqual({
      message:
        "The audio upload this job was submitted with is no longer in the gateway's blob store, so the job cannot run: submit it again (nothing was billed). " +
        'If this repeats, the gateway\'s instances do not share one blob store (README, "PostgreSQL and Redis").',
      type: 'server_error',
      code: 'job_input_missing',
      param: null,
      request_id: job.id,
    });
    expect(fake.requests.length).toBe(0);
    await gw.services.ledger.flush();
    const usage = await gw.services.db.prisma.usageRecord.findMany({ where: { requestId: job.id } });
    expect(usage.map((u) => [u.status, u.errorCode, Number(u.billedTokens)])).toEqual([[500, 'job_input_missing', 0]]);
  });
});
