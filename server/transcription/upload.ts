// The audio upload of a transcription request (multipart, spec 4.4), read as a stream: the form's
// fields become the body the contract validates, the file goes to a temporary file (sync) or the
// blob store (jobs) chunk by chunk — never whole in memory. Its container is recognised from its
// first bytes; over 25 MB is 413 as soon as the limit is crossed, and the rest is not read.
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough, Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type {} from '@fastify/multipart';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { randomToken } from '../auth/secrets.ts';
import { GatewayError, errors } from '../http/errors.ts';
import type { Services } from '../services.ts';
import { ACCEPTED, MEDIA_TYPES, SNIFF_BYTES, sniffAudio, type AudioFormat } from './formats.ts';

export const MAX_UPLOAD_BYTES = 25 * 1024 * 1024;

/** The stored upload: where it is, what it is. */
export type Upload = { where: { file: string } | { blob: string }; format: AudioFormat; mediaType: string; size: number; filename: string };

declare module 'fastify' {
  interface FastifyRequest {
    upload?: Upload;
    /** Keeps the stored upload past the response (a job took it). */
    keepUpload?: () => void;
  }
}

const tooLarge = () => errors.tooLarge(`The audio file is larger than ${MAX_UPLOAD_BYTES / 1024 / 1024} MB.`);
const notAudio = (what: string) =>
  new GatewayError(400, 'invalid_request_error', 'unsupported_audio_format', `The file is not audio in an accepted format (${what}); send one of: ${ACCEPTED}.`, 'file');

/** Reads the first bytes of the file part to recognise it, then hands on every byte, those included. */
async function sniffed(file: Readable): Promise<{ format: AudioFormat; stream: Readable }> {
  let ended = false;
  // Listened to, not iterated: leaving a for-await early would destroy the upload.
  const first = await new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = () => {
      file.pause();
      file.off('data', onData);
      file.off('end', onEnd);
      file.off('error', reject);
      resolve(Buffer.concat(chunks));
    };
    const onData = (c: Buffer) => {
      chunks.push(c);
      size += c.length;
      if (size >= SNIFF_BYTES) finish();
    };
    const onEnd = () => {
      ended = true;
      finish();
    };
    file.on('data', onData);
    file.once('end', onEnd);
    file.once('error', reject);
  });
  const format = sniffAudio(first.subarray(0, SNIFF_BYTES));
  if (!format) throw notAudio(first.length ? 'its content is not an audio container' : 'it is empty');
  const rest = new PassThrough();
  rest.write(first);
  if (ended) rest.end();
  else {
    file.once('error', (err) => rest.destroy(err));
    file.pipe(rest);
  }
  return { format, stream: rest };
}

function stopReading(request: FastifyRequest) {
  request.raw.unpipe();
  request.raw.pause();
}

/**
 * preValidation hook of the transcription routes: the fields into `request.body`, the file stored
 * (`to: 'file'` for a synchronous request, `'blob'` for a job) and described in `request.upload`.
 * The stored file is removed when the response ends, unless `keep` was called (a job took it).
 */
export function receiveUpload(services: Services, to: 'file' | 'blob') {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const fields: Record<string, unknown> = {};
    let stored: Upload | null = null;
    let cleanup: (() => Promise<void>) | null = null;
    reply.raw.once('close', () => void cleanup?.().catch(() => {}));
    try {
      for await (const part of request.parts({ limits: { fileSize: MAX_UPLOAD_BYTES, files: 1, fields: 32, fieldSize: 64 * 1024, parts: 40 } })) {
        if (part.type === 'field') {
          const name = part.fieldname.replace(/\[\]$/, '');
          if (name === 'timestamp_granularities') ((fields[name] ??= []) as unknown[]).push(part.value);
          else fields[name] = part.value;
          continue;
        }
        if (part.fieldname !== 'file') throw errors.invalid(`Unexpected file field '${part.fieldname}': the audio goes in 'file'.`, part.fieldname);
        const { format, stream } = await sniffed(part.file);
        let size = 0;
        const counted = stream.pipe(
          new Transform({
            transform(chunk: Buffer, _enc, done) {
              size += chunk.length;
              done(null, chunk);
            },
          }),
        );
        stream.once('error', (err) => counted.destroy(err));
        // At the limit the upload is refused there and then; what follows is never read.
        part.file.once('limit', () => {
          // busboy would go on reading to find further parts: the request stops being read here.
          stopReading(request);
          counted.destroy(tooLarge());
        });
        const filename = part.filename || `audio.${format}`;
        if (to === 'file') {
          const dir = await mkdtemp(path.join(tmpdir(), 'mg-upload-'));
          cleanup = () => rm(dir, { recursive: true, force: true });
          const file = path.join(dir, `audio.${format}`);
          await pipeline(counted, createWriteStream(file));
          if (part.file.truncated) throw tooLarge();
          stored = { where: { file }, format, mediaType: MEDIA_TYPES[format], size, filename };
        } else {
          const key = `uploads/${randomToken(24)}`;
          cleanup = () => services.jobs.blobs.delete(key);
          await services.jobs.blobs.put(key, counted, MEDIA_TYPES[format]);
          if (part.file.truncated) throw tooLarge();
          stored = { where: { blob: key }, format, mediaType: MEDIA_TYPES[format], size, filename };
        }
      }
    } catch (err) {
      // The rest of an upload refused part-way is not read: the connection closes after the answer.
      stopReading(request);
      reply.header('connection', 'close');
      const code = (err as { code?: string }).code;
      if (code === 'FST_REQ_FILE_TOO_LARGE') throw tooLarge();
      if (code === 'FST_PARTS_LIMIT' || code === 'FST_FILES_LIMIT' || code === 'FST_FIELDS_LIMIT') throw errors.tooLarge('The form has more fields or files than a transcription request takes.');
      if (err instanceof GatewayError) throw err;
      if (code === 'FST_INVALID_MULTIPART_CONTENT_TYPE') throw errors.unsupportedMediaType('Send the audio as multipart/form-data.');
      throw errors.invalid(`The multipart form could not be read: ${(err as Error).message}`, 'file', 'invalid_multipart');
    }
    if (!stored) throw errors.missing('file');
    request.upload = stored;
    request.body = { ...fields, file: stored.filename };
    request.keepUpload = () => {
      cleanup = null;
    };
  };
}

/** Opens the stored upload for reading, once per upstream attempt. */
export function openUpload(services: Services, u: Upload): () => Readable {
  if ('file' in u.where) {
    const file = u.where.file;
    return () => createReadStream(file);
  }
  const key = u.where.blob;
  return () => {
    const out = new PassThrough();
    services.jobs.blobs.get(key).then(
      (blob) => (blob ? blob.body.pipe(out) : out.destroy(new Error(`upload ${key} is gone`))),
      (err) => out.destroy(err),
    );
    return out;
  };
}
