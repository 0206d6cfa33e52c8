// Which blob store a gateway uses (decision 0020): an S3-compatible bucket (S3_BUCKET) when set;
// else BLOB_DIR; else, with DATABASE_URL, PostgreSQL itself — what every instance of the
// deployment already shares; else (the embedded database: one instance) DATA_DIR/blobs.
import path from 'node:path';
import { FilesystemBlobStore } from './filesystem.ts';
import { PostgresBlobStore } from './postgres.ts';
import { S3BlobStore, s3Settings } from './s3.ts';
import type { BlobStore } from './store.ts';

export type OpenedBlobStore = { store: BlobStore; description: string; close(): Promise<void> };

export async function openBlobStore(env: NodeJS.ProcessEnv, dataDir: string, timeouts: { connectMs: number; queryMs: number }): Promise<OpenedBlobStore> {
  const s3 = s3Settings(env);
  if (s3) {
    const store = await S3BlobStore.open(s3);
    return { store, description: `S3 bucket ${s3.bucket}${s3.endpoint ? ` at ${new URL(s3.endpoint).host}` : ''}`, close: async () => store.close() };
  }
  if (env.BLOB_DIR) {
    const dir = path.resolve(env.BLOB_DIR);
    return { store: new FilesystemBlobStore(dir), description: `BLOB_DIR ${dir}${env.DATABASE_URL ? ' (every instance must have this same directory)' : ''}`, close: async () => {} };
  }
  if (env.DATABASE_URL) {
    const store = await PostgresBlobStore.open(env.DATABASE_URL, timeouts);
    return { store, description: 'PostgreSQL (shared by every instance; S3_BUCKET is better for large volumes)', close: () => store.close() };
  }
  const dir = path.join(dataDir, 'blobs');
  return { store: new FilesystemBlobStore(dir), description: `${dir} (this instance only)`, close: async () => {} };
}
