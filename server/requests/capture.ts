// Bodies kept by the request log when capture is on (off by default): what the client sent and
// what it received, byte for byte up to a cap, with secrets and media payloads elided. Elision
// works on the text, so it treats a JSON body and an SSE stream alike (a stream is kept as the
// client received it: its events, in order).

/** JSON members whose value is a credential: the value is replaced, the member kept. */
const SECRET_MEMBERS = /("(?:api_key|apikey|api-key|authorization|password|secret|client_secret|access_token|refresh_token|id_token|token|x-api-key|x-goog-api-key)"\s*:\s*)"(?:[^"\\]|\\.)*"/gi;
/** A data URL's payload (an image or audio inline). */
const DATA_URL = /data:([a-z]+\/[a-z0-9.+-]+);base64,[A-Za-z0-9+/=]+/gi;
/** Long base64 runs: `b64_json`, `inlineData.data`, `input_audio.data`, audio deltas. 256 chars ≈ 192 bytes: no text is that uniform. */
const BASE64_RUN = /[A-Za-z0-9+/]{256,}={0,2}/g;

/** The text with every secret's value and every media payload replaced by a note of what was there. */
export function elide(text: string): string {
  return text
    .replace(SECRET_MEMBERS, '$1"[redacted]"')
    .replace(DATA_URL, (m, type: string) => `data:${type};base64,[elided: ${approxBytes(m.length - m.indexOf(',') - 1)} bytes]`)
    .replace(BASE64_RUN, (m) => `[elided: ${approxBytes(m.length)} bytes of base64]`);
}

const approxBytes = (base64Chars: number) => Math.floor((base64Chars * 3) / 4);

/** Media types kept as text; anything else (audio, images, archives) is noted, not stored. */
export const isTextual = (contentType: string | undefined) => !contentType || /^(text\/|application\/(json|x-ndjson|[a-z.+-]*\+json|x-www-form-urlencoded))/i.test(contentType);

/**
 * Collects what is written to a response, up to `max` bytes (then counts the rest). Installed on
 * the response only when capture is on for the request, so a request without capture pays nothing.
 */
export class BodyCapture {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  total = 0;

  constructor(private readonly max: number) {}

  add(chunk: unknown, encoding?: BufferEncoding): void {
    if (chunk === undefined || chunk === null || typeof chunk === 'function') return;
    const buf = typeof chunk === 'string' ? Buffer.from(chunk, encoding ?? 'utf8') : chunk instanceof Uint8Array ? Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength) : null;
    if (!buf) return;
    this.total += buf.length;
    if (this.kept >= this.max) return;
    const part = buf.length > this.max - this.kept ? buf.subarray(0, this.max - this.kept) : buf;
    // Copied: the writer may reuse its buffer after write() returns.
    this.chunks.push(Buffer.from(part));
    this.kept += part.length;
  }

  get truncated(): boolean {
    return this.total > this.kept;
  }

  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

/** The stored form of a body: elided text, and a last line saying it was cut when it was. */
export function storedBody(text: string, totalBytes: number, max: number): string {
  const cut = Buffer.byteLength(text) >= max && totalBytes > max;
  return elide(text) + (cut ? `\n[cut: ${totalBytes} bytes in all, the first ${max} kept]` : '');
}

/** The request body as the client sent it, for a parsed JSON or form body; a note for what was not kept. */
export function requestText(body: unknown, contentType: string | undefined, max: number): string {
  if (body === undefined || body === null) return /multipart\//i.test(contentType ?? '') ? '[multipart upload: not captured]' : '';
  if (typeof body === 'string') return body.slice(0, max);
  if (Buffer.isBuffer(body)) return isTextual(contentType) ? body.subarray(0, max).toString('utf8') : `[${contentType ?? 'binary'}: ${body.length} bytes, not captured]`;
  try {
    return JSON.stringify(body);
  } catch {
    return '[not serialisable]';
  }
}
