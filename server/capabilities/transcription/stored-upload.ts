// A transcription's audio as the HTTP layer stored it (http/audio-upload.ts): a temporary file for
// a synchronous request, a blob for a job; opened again for each upstream attempt.
import { createReadStream } from 'node:fs';
import { PassThrough, type Readable } from 'node:stream';
import type { BlobStore } from '../../blobs/store.ts';
import { jobInputMissing } from '../../jobs/input.ts';
import type { AudioFormat } from '../../transcription/formats.ts';

/** The stored upload: where it is, what it is. */
export type Upload = { where: { file: string } | { blob: string }; format: AudioFormat; mediaType: string; size: number; filename: string };

/** Opens the stored upload for reading, once per upstream attempt. */
export function openUpload(blobs: BlobStore, u: Upload): () => Readable {
  if ('file' in u.where) {
    const file = u.where.file;
    return () => createReadStream(file);
  }
  const key = u.where.blob;
  return () => {
    const out = new PassThrough();
    // Its reader may attach later (the duration probe loads its parser first): a failure before
    // then must not go unhandled; the reader still sees it through the stream's state.
    out.on('error', () => {});
    blobs.get(key).then(
      (blob) => {
        // Gone (deleted, or stored where this instance cannot see it): the job's error says so.
        if (!blob) return void out.destroy(jobInputMissing('audio upload'));
        if (out.destroyed) return void blob.body.destroy();
        // The store's failure reaches the reader; a reader that stopped early ends the store's read.
        blob.body.once('error', (err) => out.destroy(err));
        out.once('close', () => blob.body.destroy());
        blob.body.pipe(out);
      },
      (err) => out.destroy(err),
    );
    return out;
  };
}
