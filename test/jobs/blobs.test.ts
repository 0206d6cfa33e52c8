// The blob stores (filesystem, S3-compatible and PostgreSQL) behave alike: streamed in and out,
// content type kept, a missing blob is null, keys the gateway did not make are refused.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FilesystemBlobStore } from '../../server/blobs/filesystem.ts';
import { PostgresBlobStore } from '../../server/blobs/postgres.ts';
import { S3BlobStore, s3Settings } from '../../server/blobs/s3.ts';
import type { BlobStore } from '../../server/blobs/store.ts';
import { openDatabase } from '../../server/db/client.ts';
import { freshPostgres } from '../helpers/gateway.ts';
import { startS3 } from '../helpers/s3.ts';

const MiB = 1024 * 1024;
/** `n` MiB made on demand: the store must not need it all at once. */
const generated = (n: number) =>
  Readable.from(
    (function* () {
      for (let i = 0; i < n; i++) yield Buffer.alloc(MiB, i % 251);
    })(),
  );

let s3: Awaited<ReturnType<typeof startS3>>;
let pg: Awaited<ReturnType<typeof freshPostgres>>;
let dir: string;
const stores: Record<string, BlobStore> = {};
beforeAll(async () => {
  s3 = await startS3();
  dir = mkdtempSync(path.join(tmpdir(), 'mg-blobs-'));
  stores.filesystem = new FilesystemBlobStore(dir);
  stores.s3 = await S3BlobStore.open(s3Settings(s3.env)!);
  pg = await freshPostgres();
  // The tables come with the migrations.
  await (await openDatabase({ databaseUrl: pg.url, dataDir: dir })).close();
  stores.postgresql = await PostgresBlobStore.open(pg.url, { connectMs: 2_000, queryMs: 5_000 });
}, 60_000);
afterAll(async () => {
  (stores.s3 as S3BlobStore | undefined)?.close();
  await (stores.postgresql as PostgresBlobStore | undefined)?.close();
  await pg?.drop();
  await s3?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe.each(['filesystem', 's3', 'postgresql'])('%s', (name) => {
  it('stores a stream and gives it back with its size and type; delete removes it', async () => {
    const store = stores[name]!;
    expect(await store.put('jobs/job_a/output', Readable.from([Buffer.from('hello '), Buffer.from('world')]), 'text/plain')).toEqual({ size: 11, contentType: 'text/plain' });
    expect(await store.stat('jobs/job_a/output')).toEqual({ size: 11, contentType: 'text/plain' });
    const got = await store.get('jobs/job_a/output');
    expect(got).toMatchObject({ size: 11, contentType: 'text/plain' });
    expect(Buffer.concat(await got!.body.toArray()).toString()).toBe('hello world');
    await store.delete('jobs/job_a/output');
    expect(await store.get('jobs/job_a/output')).toBeNull();
    expect(await store.stat('jobs/job_a/output')).toBeNull();
    await store.delete('jobs/job_a/output'); // twice is fine
  });

  it('streams 24 MiB through (S3: in multipart parts) and back, byte for byte', async () => {
    const store = stores[name]!;
    expect(await store.put('jobs/job_big/output', generated(24), 'video/mp4')).toEqual({ size: 24 * MiB, contentType: 'video/mp4' });
    const got = (await store.get('jobs/job_big/output'))!;
    expect(got.size).toBe(24 * MiB);
    let n = 0;
    let ok = true;
    for await (const chunk of got.body as AsyncIterable<Buffer>) {
      for (let i = 0; i < chunk.length; i += 65_536) if (chunk[i] !== Math.floor((n + i) / MiB) % 251) ok = false;
      n += chunk.length;
    }
    expect([n, ok]).toEqual([24 * MiB, true]);
    await store.delete('jobs/job_big/output');
  });

  it('refuses keys the gateway does not make', async () => {
    await expect(stores[name]!.put('../escape', Readable.from([]), 'text/plain')).rejects.toThrow(/invalid blob key/);
    await expect(stores[name]!.get('jobs/../../etc/passwd')).rejects.toThrow(/invalid blob key/);
  });
});
