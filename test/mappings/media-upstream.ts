// A stand-in for server/upstream/http.ts in the media adapter tests (test/mappings/media-*.test.ts):
// each adapter's calls are recorded (method, URL, headers, JSON body or multipart fields) and
// answered from a queue of prepared answers, without a socket. A non-2xx answer and a 2xx body
// carrying an `error` become the error http.ts would throw, built by the same functions of
// upstream/errors.ts (classifyStatus with the target's vendor reading, errorInBody + reportedError);
// the HTTP layer itself is tested in test/providers/http.test.ts.
//
// Each test file mocks the module with it:
//   vi.mock('../../server/upstream/http.ts', async (importOriginal) => ({ ...(await importOriginal<object>()), ...(await import('./media-upstream.ts')).fakeHttp }));
import { Readable } from 'node:stream';
import { ProviderConfig } from '../../server/config/schema.ts';
import type { AdapterCall } from '../../server/providers/adapter.ts';
import type { MediaRequest } from '../../server/media/request.ts';
import type { ReferenceImage } from '../../server/media/references.ts';
import { GatewayError } from '../../server/runtime/errors.ts';
import { UpstreamError, classifyStatus, errorInBody, reportedError } from '../../server/upstream/errors.ts';
import type { RequestBody, UpstreamCall, UpstreamDownload, UpstreamJson, UpstreamTarget } from '../../server/upstream/http.ts';
import { multipartBody, type MultipartField } from '../../server/upstream/multipart.ts';

/** One request an adapter made. */
export type Sent = {
  method: 'GET' | 'POST';
  url: string;
  headers: Record<string, string>;
  /** A JSON body (postJson, or download with `{ json }`). */
  json?: unknown;
  /** Multipart fields (postMultipart), as the adapter built them. */
  form?: MultipartField[];
};

/** What the fake upstream answers next: JSON (status 200 unless given), a raw error body, or bytes. */
export type Answer = { status?: number; json: unknown } | { status: number; text: string } | { bytes: Buffer; contentType: string };

const queue: Answer[] = [];
/** The requests made since the last `reset()`, in order. */
export const sent: Sent[] = [];

/** Queues the answers of the next calls, one per call. */
export function answer(...answers: Answer[]): void {
  queue.push(...answers);
}

/** Forgets the requests and any answer left unused (call in beforeEach). */
export function reset(): void {
  queue.length = 0;
  sent.length = 0;
}

function next(target: UpstreamTarget): { status: number; text: string } | { bytes: Buffer; contentType: string } {
  const a = queue.shift();
  if (!a) throw new Error(`no answer queued for ${target.url}`);
  if ('bytes' in a) return a;
  return 'json' in a ? { status: a.status ?? 200, text: JSON.stringify(a.json) } : a;
}

/** A non-2xx status as http.ts `send` throws it (its Retry-After left out). */
const failed = (target: UpstreamTarget, status: number, text: string) => classifyStatus(target.provider, status, text, undefined, target.errorMessage);

function jsonAnswer(target: UpstreamTarget, errorsInBody: boolean): UpstreamJson {
  const a = next(target);
  if ('bytes' in a) throw new Error('a JSON call was answered with bytes');
  if (a.status < 200 || a.status >= 300) throw failed(target, a.status, a.text);
  const json: unknown = JSON.parse(a.text);
  const error = errorsInBody ? errorInBody(json) : undefined;
  if (error !== undefined) throw reportedError(target.provider, error);
  return { text: a.text, json, headers: {} };
}

const record = (method: Sent['method'], target: UpstreamTarget, extra: Partial<Sent> = {}) => sent.push({ method, url: target.url, headers: target.headers, ...extra });

/** The functions of server/upstream/http.ts the adapters call. */
export const fakeHttp = {
  async postJson(call: UpstreamCall): Promise<UpstreamJson> {
    record('POST', call, { json: JSON.parse(JSON.stringify(call.body)) });
    return jsonAnswer(call, true);
  },
  async getJson(target: UpstreamTarget): Promise<UpstreamJson> {
    record('GET', target);
    return jsonAnswer(target, false);
  },
  async postMultipart(target: UpstreamTarget, fields: MultipartField[]): Promise<UpstreamJson> {
    record('POST', target, { form: fields });
    return jsonAnswer(target, true);
  },
  async download(target: UpstreamTarget, body?: RequestBody): Promise<UpstreamDownload> {
    if (body && !('json' in body)) throw new Error('the media adapters download with a JSON body or none');
    record(body ? 'POST' : 'GET', target, body ? { json: body.json } : {});
    const a = next(target);
    if (!('bytes' in a)) throw failed(target, a.status, a.text);
    return { headers: { 'content-type': a.contentType }, contentType: a.contentType, contentLength: a.bytes.length, body: Readable.from([a.bytes]), abort: () => {} };
  },
};

/** A provider as the config loader makes it (defaults applied), with a key. */
export const provider = (type: string, over: Record<string, unknown> = {}): ProviderConfig => ProviderConfig.parse({ id: `${type}-test`, type, api_key: 'test-key', ...over });

/** One attempt's AdapterCall; `warnings` collects what the adapter names. */
export function adapterCall(p: ProviderConfig, upstreamModel: string): { call: AdapterCall; warnings: string[] } {
  const warnings: string[] = [];
  return { call: { provider: p, upstreamModel, warn: (m) => warnings.push(m), waitOn: (step) => step }, warnings };
}

/** The normalized image/video request (media/request.ts) with nothing asked beyond the prompt. */
export const mediaRequest = (over: Partial<MediaRequest> = {}): MediaRequest => ({
  prompt: 'A cute baby sea otter',
  pixels: null,
  ratio: null,
  references: [],
  negativePrompt: null,
  seed: null,
  quality: null,
  style: null,
  seconds: null,
  responseFormat: 'b64_json',
  sync: true,
  ...over,
});

/** Two real 1×1 PNGs (test/media/fake-media.ts has the same), as reference images and as answers' image bytes. */
/** What Firebase's vertexai/unary-failure-quota-exceeded.json, answered as a 429 to the 'gemini-test' provider, becomes: the upstream's failure, unchanged. */
export const GEMINI_QUOTA_429 = {
  error: 'UpstreamError',
  status: 429,
  code: 'upstream_rate_limited',
  retryable: true,
  message:
    "provider 'gemini-test': answered HTTP 429: Quota exceeded for quota metric 'Generate Content API requests per minute' and limit 'GenerateContent request limit per minute for a region' of service 'generativelanguage.googleapis.com' for consumer 'project_number:348715329010'.",
};

export const PNG_B64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
export const PNG = Buffer.from(PNG_B64, 'base64');
export const PNG_2 = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
export const pngReference: ReferenceImage = { mediaType: 'image/png', data: PNG };

/** What a failed call threw, as a plain object of the fields a client or the failover reads. */
export async function failure(p: Promise<unknown>): Promise<Record<string, unknown>> {
  try {
    await p;
  } catch (err) {
    if (err instanceof GatewayError) return { error: 'GatewayError', status: err.status, type: err.type, code: err.code, param: err.param, message: err.message };
    if (err instanceof UpstreamError) return { error: 'UpstreamError', status: err.status, code: err.code, retryable: err.retryable, message: err.message };
    throw err;
  }
  throw new Error('expected the call to fail');
}

/** A stream's bytes, read to its end. */
export async function bytesOf(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of body) chunks.push(Buffer.from(c as Uint8Array));
  return Buffer.concat(chunks);
}

/** A file entry of a decoded form: its name, type and bytes (as base64, for whole-object comparison). */
export type FormFile = { filename: string; type: string; base64: string };

/**
 * Multipart fields encoded as upstream/multipart.ts puts them on the wire, then decoded the way a
 * server reads them (the fetch API's FormData): the entries in order, each a string or a file.
 */
export async function wireForm(fields: MultipartField[]): Promise<[string, string | FormFile][]> {
  const m = multipartBody(fields);
  const chunks: Buffer[] = [];
  for await (const c of m.stream()) chunks.push(Buffer.from(c));
  const form = await new Response(Buffer.concat(chunks), { headers: { 'content-type': m.contentType } }).formData();
  const out: [string, string | FormFile][] = [];
  for (const [name, v] of form.entries()) {
    out.push([name, typeof v === 'string' ? v : { filename: v.name, type: v.type, base64: Buffer.from(await v.arrayBuffer()).toString('base64') }]);
  }
  return out;
}
