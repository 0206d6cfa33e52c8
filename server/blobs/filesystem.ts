// Blobs as files under DATA_DIR/blobs. A blob is written to a temporary name and renamed into
// place when complete, so a reader never sees half a file; its content type sits beside it.
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { randomToken } from '../runtime/secrets.ts';
import { checkKey, type BlobInfo, type BlobStore } from './store.ts';

export class FilesystemBlobStore implements BlobStore {
  readonly kind = 'filesystem' as const;
  constructor(private readonly root: string) {}

  private file(key: string) {
    return path.join(this.root, checkKey(key));
  }

  async put(key: string, body: Readable, contentType: string): Promise<BlobInfo> {
    const file = this.file(key);
    await mkdir(path.dirname(file), { recursive: true });
    const tmp = `${file}.${randomToken(6)}.part`;
    try {
      await pipeline(body, createWriteStream(tmp, { flags: 'wx' }));
      await writeFile(`${file}.type`, contentType);
      await rename(tmp, file);
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
    return { size: (await stat(file)).size, contentType };
  }

  async stat(key: string): Promise<BlobInfo | null> {
    const file = this.file(key);
    try {
      const [s, contentType] = await Promise.all([stat(file), readFile(`${file}.type`, 'utf8')]);
      return { size: s.size, contentType };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }

  async get(key: string): Promise<(BlobInfo & { body: Readable }) | null> {
    const file = this.file(key);
    try {
      const [s, contentType] = await Promise.all([stat(file), readFile(`${file}.type`, 'utf8')]);
      return { size: s.size, contentType, body: createReadStream(file) };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    const file = this.file(key);
    await Promise.all([rm(file, { force: true }), rm(`${file}.type`, { force: true })]);
  }
}
