// Where uploads, job outputs and hosted copies live: bytes in, bytes out, always as streams (an
// upload or a video is never held whole in memory). Which store a gateway uses: blobs/select.ts.
import type { Readable } from 'node:stream';

export type BlobInfo = { size: number; contentType: string };

export interface BlobStore {
  readonly kind: 'filesystem' | 's3' | 'postgresql';
  /** Stores the stream under `key` (replacing it); resolves with its size once every byte is durable. */
  put(key: string, body: Readable, contentType: string): Promise<BlobInfo>;
  /** The blob's bytes and metadata, or null when there is none. */
  get(key: string): Promise<(BlobInfo & { body: Readable }) | null>;
  /** The blob's metadata without opening its bytes, or null when there is none. */
  stat(key: string): Promise<BlobInfo | null>;
  /** Removes the blob; a missing one is not an error. */
  delete(key: string): Promise<void>;
  /** Removes what writes that never completed left behind (a store that can leave some); resolves with how many. */
  sweep?(): Promise<number>;
}

/** Keys are made by the gateway (`jobs/<id>/output`): anything else is refused before a path is built. */
export function checkKey(key: string): string {
  if (!/^[A-Za-z0-9_-]+(\/[A-Za-z0-9_.-]+)*$/.test(key) || key.split('/').some((p) => p === '..' || p === '.')) throw new Error(`invalid blob key: ${JSON.stringify(key)}`);
  return key;
}
