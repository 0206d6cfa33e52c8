// multipart/form-data built as a stream: field headers, then each file's bytes as they are read,
// so an upload of any size holds one chunk in memory. The length is known (and sent) when every
// file's size is, which some upstreams require.
import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';

export type MultipartField =
  | { name: string; value: string }
  | {
      name: string;
      filename: string;
      contentType: string;
      /** The bytes, or a function opening them: called once per attempt, since a failed-over request sends them again. */
      data: Uint8Array | (() => Readable);
      /** Byte size of an opened stream, when known: makes the body's length known. */
      size?: number;
    };

// Quotes and line breaks in names are percent-encoded, as browsers do (WHATWG multipart/form-data).
const quoted = (s: string) => `"${s.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A')}"`;

function partHeader(boundary: string, f: MultipartField): Buffer {
  let h = `--${boundary}\r\nContent-Disposition: form-data; name=${quoted(f.name)}`;
  if ('filename' in f) h += `; filename=${quoted(f.filename)}\r\nContent-Type: ${f.contentType.replace(/[\r\n]/g, '')}`;
  return Buffer.from(`${h}\r\n\r\n`);
}

const CRLF = Buffer.from('\r\n');

export function multipartBody(fields: MultipartField[]): { contentType: string; length: number | undefined; stream(): AsyncIterable<Uint8Array> } {
  const boundary = `----gateway-${randomBytes(16).toString('hex')}`;
  const headers = fields.map((f) => partHeader(boundary, f));
  const closing = Buffer.from(`--${boundary}--\r\n`);
  let length: number | undefined = closing.length;
  fields.forEach((f, i) => {
    const size = 'value' in f ? Buffer.byteLength(f.value) : f.data instanceof Uint8Array ? f.data.byteLength : f.size;
    length = length === undefined || size === undefined ? undefined : length + headers[i]!.length + size + CRLF.length;
  });
  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    length,
    async *stream() {
      for (const [i, f] of fields.entries()) {
        yield headers[i]!;
        if ('value' in f) yield Buffer.from(f.value);
        else if (f.data instanceof Uint8Array) yield f.data;
        else for await (const chunk of f.data()) yield chunk as Uint8Array;
        yield CRLF;
      }
      yield closing;
    },
  };
}
