// Bodies kept by the request log when capture is on (off by default; inference routes only): what
// the client sent and what it received, byte for byte up to a cap, with secrets and media payloads
// elided. Elision works on the text, so it treats a JSON body and an SSE stream alike (a stream is
// kept as the client received it: its events, in order).
//
// Secrets are elided before the body is cut to its cap, never after (a secret cut at the cap would
// be stored in part): a window of the body beyond the cap is kept (`captureWindow`), elided whole,
// then cut. Every secret the gateway holds is redacted by value as well as by pattern.
import { redactHeldSecrets } from '../runtime/held-secrets.ts';

/** JSON members whose value is a credential: the value is replaced, the member kept. */
const SECRET_MEMBERS = /("(?:api_key|apikey|api-key|authorization|password|secret|client_secret|access_token|refresh_token|id_token|token|code_verifier|x-api-key|x-goog-api-key)"\s*:\s*)"(?:[^"\\]|\\.)*"/gi;
/** A data URL's payload (an image or audio inline). */
const DATA_URL = /data:([a-z]+\/[a-z0-9.+-]+);base64,[A-Za-z0-9+/=]+/gi;
/** A hosted file's signed link (`/v1/files/<token>`, an image answer's `url`): the token is a download credential. */
const HOSTED_LINK = /(\/v1\/files\/)[A-Za-z0-9_-]+\.\d{1,12}\.[A-Za-z0-9_-]+/g;
/** Long base64 runs: `b64_json`, `inlineData.data`, `input_audio.data`, audio deltas. 256 chars ≈ 192 bytes: no text is that uniform. */
const BASE64_RUN = /[A-Za-z0-9+/]{256,}={0,2}/g;

/** The text with every secret's value and every media payload replaced by a note of what was there. */
export function elide(text: string): string {
  return redactHeldSecrets(text)
    .replace(SECRET_MEMBERS, '$1"[redacted]"')
    .replace(HOSTED_LINK, '$1[redacted]')
    .replace(DATA_URL, (m, type: string) => `data:${type};base64,[elided: ${approxBytes(m.length - m.indexOf(',') - 1)} bytes]`)
    .replace(BASE64_RUN, (m) => `[elided: ${approxBytes(m.length)} bytes of base64]`);
}

const approxBytes = (base64Chars: number) => Math.floor((base64Chars * 3) / 4);

/** How far past the cap a body is kept before eliding: elision shortens media payloads, and looks at whole secrets. */
const WINDOW_MARGIN = 64 * 1024;
/** The end of a window cut short is dropped before eliding: no secret is longer, so none is left in part. */
const CUT_TAIL = 4 * 1024;

/** The bytes of a body kept to store `max` of it: the cap and a margin. */
export const captureWindow = (max: number) => max + WINDOW_MARGIN;

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

/**
 * The stored form of a body: the window kept of it (`text`, of a body of `totalBytes`), elided
 * whole, then cut to `max` bytes, with a last line saying it was cut when it was.
 */
export function storedBody(text: string, totalBytes: number, max: number): string {
  const windowCut = totalBytes > Buffer.byteLength(text);
  // A window that ends inside the body may end inside a secret: that end goes before eliding.
  const clean = elide(windowCut ? text.slice(0, Math.max(0, text.length - CUT_TAIL)) : text);
  const bytes = Buffer.from(clean);
  if (bytes.length <= max && !windowCut) return clean;
  return `${bytes.subarray(0, max).toString('utf8')}\n[cut: ${totalBytes} bytes in all, the first ${max} kept after eliding secrets and media]`;
}

/** The request body as the client sent it, for a parsed JSON or form body (a raw one: its first `max` bytes); a note for what was not kept. */
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
