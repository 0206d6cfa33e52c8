// A multipart/form-data request body read as a stream (busboy), bounded as a whole, for the routes
// that take an upload. Every stream involved has an error handler from the moment it exists: a
// form cut short, a client gone mid-upload or a body past its bound ends the read with a
// GatewayError in the part-7 body (its own words, never the parser's), and the connection is
// closed after it — never an unhandled 'error' event, never a request left waiting on a parser
// that will not finish.
import { Busboy, type BusboyFileStream, type BusboyInstance } from '@fastify/busboy';
import type { FastifyRequest } from 'fastify';
import { GatewayError, errors } from '../runtime/errors.ts';

export type FormLimits = {
  /** Bytes of the one file part. */
  fileBytes: number;
  /** Bytes of one field's value. */
  fieldBytes: number;
  /** Number of fields. */
  fields: number;
  /**
   * Bytes of the whole body: the file plus an allowance for the fields, part headers and
   * boundaries. A body declared larger is refused before a byte is read; one that turns out
   * larger (chunked, or garbage in which no part is ever found) as soon as it passes the bound.
   */
  bodyBytes: number;
};

/** The file part as it arrives: its bytes are `stream`, read by the route's consumer. */
export type FilePart = { fieldname: string; filename: string; mimeType: string; stream: BusboyFileStream };

/** Fields by name; a name sent several times (or with `[]`) keeps every value, in order. */
export type FormFields = Record<string, string | string[]>;

const MULTIPART = /^multipart\/form-data\b/i;

/** Refused without reading on: the connection closes after the answer, so the rest is never read. */
const closing = (gw: GatewayError) => new GatewayError(gw.status, gw.type, gw.code, gw.message, gw.param, { ...gw.headers, connection: 'close' }, gw.extra);

const truncatedForm = () =>
  errors.invalid(
    'The multipart form ends before its closing boundary (the upload was cut short, or Content-Length is wrong): send the whole form, ending with --<boundary>--.',
    null,
    'invalid_multipart',
  );
const malformedForm = (what: string) => errors.invalid(`The multipart form is malformed: ${what}. Send multipart/form-data as an HTTP client or FormData builds it.`, null, 'invalid_multipart');

/** The client went away mid-upload: nobody reads this answer, it names the request's end in the log. */
const clientGone = () => new GatewayError(400, 'invalid_request_error', 'client_closed_request', 'The client closed the connection before the upload ended.');

/**
 * Reads the form of `request`: the fields into the result, the one file part handed to `onFile`
 * as it starts (the route streams it where it goes). Resolves once the form has ended and
 * `onFile` has finished with the file; rejects with the first failure (a GatewayError, or the
 * consumer's own), after `onFile` has settled, so whatever it stored can be cleaned up by its
 * owner. A second file part, or a file in another field than `expected.field`, is refused;
 * `expected.noun` names the file in messages.
 */
export function readForm<T>(request: FastifyRequest, limits: FormLimits, expected: { field: string; noun: string }, onFile: (file: FilePart) => Promise<T>): Promise<{ fields: FormFields; file: T | null }> {
  const contentType = request.headers['content-type'] ?? '';
  // Every refusal, here or part-way, closes the connection: the rest of the body is never read.
  const refuse = (err: unknown) => Promise.reject(err instanceof GatewayError ? closing(err) : err);
  if (!MULTIPART.test(contentType)) return refuse(errors.unsupportedMediaType('Send the form as multipart/form-data.'));
  const declared = Number(request.headers['content-length']);
  if (declared > limits.bodyBytes) return refuse(bodyTooLarge(limits));

  return new Promise<{ fields: FormFields; file: T | null }>((resolve, reject) => {
    const raw = request.raw;
    // No prototype: a field named `__proto__` or `constructor` is a field like any other.
    const fields: FormFields = Object.create(null) as FormFields;
    let failure: Error | null = null;
    let consumer: Promise<T> | null = null;
    let current: BusboyFileStream | null = null;
    let parsed = false;
    let received = 0;

    const settle = () => {
      // The consumer's own promise decides when the file is done; the form's end alone is not enough.
      const after = consumer ?? Promise.resolve(null);
      after.then(
        (file) => (failure ? reject(failure) : resolve({ fields, file })),
        (err: unknown) => reject(failure ?? err),
      );
    };

    /** The first failure wins: reading stops, the file's consumer sees the error, the form ends. */
    const fail = (err: Error) => {
      if (failure) return;
      failure = err;
      raw.unpipe(bb);
      raw.pause();
      raw.off('data', count);
      current?.destroy(err);
      settle();
    };

    const count = (chunk: Buffer) => {
      received += chunk.length;
      if (received > limits.bodyBytes) fail(bodyTooLarge(limits));
    };

    let bb: BusboyInstance;
    try {
      bb = new Busboy({
        headers: { ...request.headers, 'content-type': contentType },
        limits: { fileSize: limits.fileBytes, fieldSize: limits.fieldBytes, fields: limits.fields, files: 1, parts: limits.fields + 1 },
      });
    } catch {
      return reject(errors.invalid("The Content-Type multipart/form-data has no boundary: send it as `multipart/form-data; boundary=<boundary>`, as HTTP clients and FormData do.", null, 'invalid_multipart'));
    }

    bb.on('field', (name: string, value: string, _nameTruncated: boolean, valueTruncated: boolean) => {
      if (failure) return;
      if (valueTruncated) return fail(errors.tooLarge(`The form field '${name}' is larger than ${limits.fieldBytes / 1024} KiB.`, name));
      const key = name.replace(/\[\]$/, '');
      const previous = fields[key];
      fields[key] = previous === undefined ? value : [previous, value].flat();
    });

    bb.on('file', (name: string, stream: BusboyFileStream, filename: string, _encoding: string, mimeType: string) => {
      // Before anything else: an error on this stream (the form cut short) is never unhandled.
      stream.on('error', () => {});
      if (failure) return void stream.resume();
      if (name !== expected.field) {
        stream.resume();
        return fail(errors.invalid(`Unexpected file field '${name}': the ${expected.noun} goes in '${expected.field}'.`, name));
      }
      current = stream;
      stream.once('limit', () => fail(errors.tooLarge(`The ${expected.noun} is larger than ${limits.fileBytes / 1024 / 1024} MB.`, expected.field)));
      stream.once('end', () => {
        if (current === stream) current = null;
      });
      consumer = onFile({ fieldname: name, filename, mimeType, stream });
      // A consumer failing on its own (the content refused) ends the form there.
      consumer.catch((err: Error) => fail(err));
    });

    const tooMany = () => fail(errors.tooLarge(`The form has more fields or files than this endpoint takes (at most ${limits.fields} fields and one file).`));
    bb.on('fieldsLimit', tooMany);
    bb.on('filesLimit', tooMany);
    bb.on('partsLimit', tooMany);
    bb.on('error', (err: Error) => fail(/unexpected end|terminated early/i.test(err.message) ? truncatedForm() : malformedForm('its parts could not be read')));
    bb.on('finish', () => {
      parsed = true;
      if (!failure) settle();
    });

    // Gone already (the client left while its key was looked up): nothing will arrive.
    if (raw.destroyed || raw.readableAborted) return fail(clientGone());
    raw.on('data', count);
    raw.on('error', () => fail(clientGone()));
    // A request that closes before its body ended: the client is gone (or cut the body short).
    raw.on('close', () => {
      if (!raw.complete && !parsed) fail(clientGone());
    });
    raw.pipe(bb);
  }).catch(refuse);
}

function bodyTooLarge(limits: FormLimits): GatewayError {
  return errors.tooLarge(`The request body is larger than this endpoint accepts (${limits.fileBytes / 1024 / 1024} MB of file and ${Math.round((limits.bodyBytes - limits.fileBytes) / 1024)} KiB for the other fields).`);
}
