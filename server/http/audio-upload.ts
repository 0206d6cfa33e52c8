// The audio upload of a transcription request (multipart, docs/api.md, "Transcription"), read as a stream: the form's
// fields become the body the contract validates, the file goes to a temporary file (sync) or the
// blob store (jobs) chunk by chunk — never whole in memory. Its container is recognised from its
// first bytes; over 25 MB is 413 as soon as the limit is crossed, and the rest is not read.
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { randomToken } from '../runtime/secrets.ts';
import { GatewayError, errors } from '../runtime/errors.ts';
import { readForm, type FilePart, type FormLimits } from './multipart-form.ts';
import type { BlobStore } from '../blobs/store.ts';
import type { Upload } from '../capabilities/transcription/stored-upload.ts';
import { ACCEPTED, MEDIA_TYPES, SNIFF_BYTES, sniffAudio, type AudioFormat } from '../transcription/formats.ts';

export const MAX_UPLOAD_BYTES = 25 * 1024 * 1024;

/**
 * The form of a transcription request: the audio, and small fields (a prompt is the largest, a
 * few hundred words); the whole body may carry 256 KiB besides the file for those, their part
 * headers and the boundaries.
 */
export const UPLOAD_LIMITS: FormLimits = { fileBytes: MAX_UPLOAD_BYTES, fieldBytes: 64 * 1024, fields: 32, bodyBytes: MAX_UPLOAD_BYTES + 256 * 1024 };

declare module 'fastify' {
  interface FastifyRequest {
    upload?: Upload;
    /** Keeps the stored upload past the response (a job took it). */
    keepUpload?: () => void;
  }
}

const notAudio = (what: string) =>
  new GatewayError(400, 'invalid_request_error', 'unsupported_audio_format', `The file is not audio in an accepted format (${what}); send one of: ${ACCEPTED}.`, 'file');

/** The first `n` bytes of `stream` (fewer when it ends first); the stream is paused after them. */
function firstBytes(stream: Readable, n: number): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    // Failed while nobody listened (the form cut short while the temporary directory was made).
    if (stream.destroyed) return reject(stream.errored ?? new Error('the upload stream closed early'));
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (err?: Error) => {
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', finish);
      stream.off('close', onClose);
      if (err) return reject(err);
      stream.pause();
      // What was read past `n` goes back to the front: the rest of the file starts there.
      const all = Buffer.concat(chunks);
      if (all.length > n) stream.unshift(all.subarray(n));
      resolve(all.subarray(0, n));
    };
    const onData = (c: Buffer) => {
      chunks.push(c);
      size += c.length;
      if (size >= n) finish();
    };
    const onEnd = () => finish();
    // Destroyed without an error (never by the form reader, but a stream may be): no more bytes.
    const onClose = () => finish(stream.readableEnded ? undefined : (stream.errored ?? new Error('the upload stream closed early')));
    stream.on('data', onData);
    stream.once('end', onEnd);
    stream.once('error', finish);
    stream.once('close', onClose);
  });
}

/**
 * The file's bytes from its first ones on, counted as they pass. A Readable made here with an
 * error listener at once: its consumer (a pipeline, the blob store) learns of a failure through
 * its own handling; the listener only keeps one raised before that consumer is attached handled.
 */
function counted(head: Buffer, rest: Readable, onBytes: (n: number) => void): Readable {
  async function* bytes() {
    onBytes(head.length);
    yield head;
    for await (const chunk of rest) {
      onBytes((chunk as Buffer).length);
      yield chunk as Buffer;
    }
  }
  const out = Readable.from(bytes(), { objectMode: false });
  out.on('error', () => {});
  return out;
}

/** Stores the file part where `to` says, recognised by its first bytes; cleanup registered as soon as there is something to clean. */
async function store(blobs: BlobStore, part: FilePart, to: 'file' | 'blob', setCleanup: (fn: () => Promise<void>) => void): Promise<Upload> {
  // The temporary directory before the first byte is read: the file part waits, paused, meanwhile.
  const dir = to === 'file' ? await mkdtemp(path.join(tmpdir(), 'mg-upload-')) : null;
  if (dir) setCleanup(() => rm(dir, { recursive: true, force: true }));
  const head = await firstBytes(part.stream, SNIFF_BYTES);
  const format = sniffAudio(head);
  if (!format) throw notAudio(head.length ? 'its content is not an audio container' : 'it is empty');
  let size = 0;
  const bytes = counted(head, part.stream, (n) => (size += n));
  const filename = part.filename || `audio.${format}`;
  if (dir) {
    const file = path.join(dir, `audio.${format}`);
    await pipeline(bytes, createWriteStream(file));
    return { where: { file }, format, mediaType: MEDIA_TYPES[format], size, filename };
  }
  const key = `uploads/${randomToken(24)}`;
  setCleanup(() => blobs.delete(key));
  await blobs.put(key, bytes, MEDIA_TYPES[format]);
  return { where: { blob: key }, format, mediaType: MEDIA_TYPES[format], size, filename };
}

/**
 * preValidation hook of the transcription routes: the fields into `request.body`, the file stored
 * (`to: 'file'` for a synchronous request, `'blob'` for a job) and described in `request.upload`.
 * The stored file is removed when the response ends, unless `keep` was called (a job took it).
 */
export function receiveUpload(blobs: BlobStore, to: 'file' | 'blob') {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    let cleanup: (() => Promise<void>) | null = null;
    reply.raw.once('close', () => void cleanup?.().catch(() => {}));
    const form = await readForm(request, UPLOAD_LIMITS, { field: 'file', noun: 'audio file' }, (part) =>
      store(blobs, part, to, (fn) => {
        cleanup = fn;
      }),
    ).catch((err: unknown) => {
      // readForm's own refusals close the connection; so does any other failure (a disk that is
      // full): the rest of the upload is not read.
      reply.header('connection', 'close');
      throw err;
    });
    if (!form.file) throw errors.missing('file');
    const fields: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(form.fields)) {
      // The only list field; any other sent twice keeps its last value, as form readers do.
      fields[name] = name === 'timestamp_granularities' ? [value].flat() : Array.isArray(value) ? value[value.length - 1] : value;
    }
    request.upload = form.file;
    request.body = { ...fields, file: form.file.filename };
    request.keepUpload = () => {
      cleanup = null;
    };
  };
}
