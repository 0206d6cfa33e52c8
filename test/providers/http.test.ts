// The upstream HTTP layer beyond JSON and SSE: GET polling, raw bytes, streamed multipart uploads
// and streamed downloads, each under the provider's time limits and classified like postJson.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { download, getJson, postBinary, postMultipart, type UpstreamLimits, type UpstreamTarget } from '../../server/upstream/http.ts';
import { UpstreamError } from '../../server/upstream/errors.ts';
import { elevenlabsClient } from '../../server/providers/elevenlabs/client.ts';

type Handler = (req: IncomingMessage, res: ServerResponse) => unknown;

let server: Server;
let base: string;
const sockets = new Set<Socket>();
let handler: Handler = (_req, res) => res.end();

beforeAll(async () => {
  server = createServer((req, res) => void handler(req, res));
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise((r) => server.close(r));
});

const LIMITS: UpstreamLimits = { connectMs: 1000, firstByteMs: 600, idleMs: 500, totalMs: 1500 };
const target = (path: string, extra: Partial<UpstreamTarget> = {}): UpstreamTarget => ({ provider: 'fake', url: `${base}${path}`, headers: { authorization: 'Bearer k' }, limits: LIMITS, ...extra });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function bodyOf(req: IncomingMessage): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of req) parts.push(c as Buffer);
  return Buffer.concat(parts);
}

async function failure(p: Promise<unknown>): Promise<UpstreamError> {
  try {
    await p;
  } catch (err) {
    return err as UpstreamError;
  }
  throw new Error('expected a failure');
}

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
};

describe('getJson (polling)', () => {
  it('GETs with the provider headers and reads JSON', async () => {
    let seen: IncomingMessage | null = null;
    handler = (req, res) => {
      seen = req;
      json(res, 200, { name: 'operations/1', done: false });
    };
    const r = await getJson(target('/v1beta/operations/1'));
    expect(r.json).toEqual({ name: 'operations/1', done: false });
    expect(seen!.method).toBe('GET');
    expect(seen!.headers.authorization).toBe('Bearer k');
    expect(seen!.headers['content-type']).toBeUndefined();
  });

  it('classifies failures as postJson does (statuses, Retry-After, bytes that are not JSON); an error in a 200 body is the operation\'s, left to the caller', async () => {
    handler = (_req, res) => json(res, 429, { error: { message: 'slow down' } }, { 'retry-after': '3' });
    let e = await failure(getJson(target('/x')));
    expect(e).toBeInstanceOf(UpstreamError);
    expect(e).toMatchObject({ status: 429, retryable: true, code: 'upstream_rate_limited', retryAfter: 3, message: "provider 'fake': answered HTTP 429: slow down" });
    handler = (_req, res) => json(res, 404, { error: { message: 'no such operation' } });
    expect(await failure(getJson(target('/x')))).toMatchObject({ status: 404, code: 'upstream_error' });
    // A finished operation's failure (`done: true, error: {…}`) is an answer the adapter reads.
    handler = (_req, res) => json(res, 200, { name: 'operations/1', done: true, error: { code: 3, message: 'bad prompt' } });
    expect((await getJson(target('/x'))).json).toEqual({ name: 'operations/1', done: true, error: { code: 3, message: 'bad prompt' } });
    handler = (_req, res) => res.end('<html>');
    expect((await failure(getJson(target('/x')))).message).toBe("provider 'fake': sent malformed data (the answer is not JSON)");
  });

  it('time limits: no headers within the first-byte limit; a trickle past the total deadline', async () => {
    handler = () => {}; // never answers
    let started = performance.now();
    let e = await failure(getJson(target('/x')));
    expect(e).toMatchObject({ code: 'upstream_timeout', message: "provider 'fake': timed out waiting for the first byte after 600 ms" });
    expect(performance.now() - started).toBeLessThan(1400);
    handler = async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      for (let i = 0; i < 20 && !res.destroyed; i++) {
        res.write(' ');
        await sleep(200);
      }
      res.end('{}');
    };
    started = performance.now();
    e = await failure(getJson(target('/x')));
    expect(e.message).toBe("provider 'fake': timed out: no complete answer within 1500 ms");
  });

  it('a connection refused is a network failure naming no address', async () => {
    const e = await failure(getJson({ ...target('/x'), url: 'http://127.0.0.1:9/x' }));
    expect(e).toMatchObject({ status: 0, retryable: true, code: 'upstream_unreachable', message: "provider 'fake': connection refused" });
  });

  it("a vendor's own error reading (ElevenLabs' detail object)", async () => {
    handler = (_req, res) => json(res, 401, { detail: { status: 'quota_exceeded', message: 'This request exceeds your quota.' } });
    const e = await failure(getJson(target('/v1/history', { errorMessage: elevenlabsClient.errorMessage })));
    expect(e.message).toBe("provider 'fake': answered HTTP 401: This request exceeds your quota. (quota_exceeded)");
  });
});

describe('postBinary', () => {
  it('sends bytes with their type and length and reads the JSON answer', async () => {
    let got: { type?: string; length?: string; body: Buffer } | null = null;
    handler = async (req, res) => {
      got = { type: req.headers['content-type'], length: req.headers['content-length'], body: await bodyOf(req) };
      json(res, 200, { text: 'hello' });
    };
    const bytes = Buffer.from([0x52, 0x49, 0x46, 0x46, 0, 1, 2, 3]);
    const r = await postBinary(target('/v1/speech-to-text'), { data: bytes, contentType: 'audio/wav' });
    expect(r.json).toEqual({ text: 'hello' });
    expect(got).toEqual({ type: 'audio/wav', length: '8', body: bytes });
  });

  it('a stream opened per attempt goes up as it is read; a failure of that source is the gateway’s, not the upstream’s', async () => {
    handler = async (req, res) => json(res, 200, { bytes: (await bodyOf(req)).length, length: req.headers['content-length'] ?? null });
    const r = await postBinary(target('/up'), { data: () => Readable.from([Buffer.alloc(1000), Buffer.alloc(24)]), contentType: 'application/octet-stream', length: 1024 });
    expect(r.json).toEqual({ bytes: 1024, length: '1024' });
    const broken = new Error('disk read failed');
    const source = () =>
      new Readable({
        read() {
          this.destroy(broken);
        },
      });
    const e = await failure(postBinary(target('/up'), { data: source, contentType: 'application/octet-stream' }));
    expect(e).toBe(broken);
    expect(e).not.toBeInstanceOf(UpstreamError);
  });
});

describe('postMultipart', () => {
  it('a form with fields and files, parsed by a standard multipart reader', async () => {
    let form: FormData | null = null;
    let length: string | undefined;
    handler = async (req, res) => {
      length = req.headers['content-length'];
      form = await new Response(await bodyOf(req), { headers: { 'content-type': req.headers['content-type']! } }).formData();
      json(res, 200, { ok: true });
    };
    const audio = Buffer.from('RIFF....WAVEfmt ');
    const r = await postMultipart(target('/v1/audio/transcriptions'), [
      { name: 'model', value: 'whisper-1' },
      { name: 'prompt', value: 'Zürich, "quoted"' },
      { name: 'file', filename: 'a "b".wav', contentType: 'audio/wav', data: () => Readable.from([audio.subarray(0, 4), audio.subarray(4)]), size: audio.length },
    ]);
    expect(r.json).toEqual({ ok: true });
    expect(form!.get('model')).toBe('whisper-1');
    expect(form!.get('prompt')).toBe('Zürich, "quoted"');
    const file = form!.get('file') as File;
    // Sent percent-encoded (as browsers do), read back as written.
    expect(file.name).toBe('a "b".wav');
    expect(file.type).toBe('audio/wav');
    expect(Buffer.from(await file.arrayBuffer())).toEqual(audio);
    // Every size known: the length is sent, and matches what arrived.
    expect(Number(length)).toBeGreaterThan(audio.length);
    // A file of unknown size: chunked, no length.
    handler = async (req, res) => json(res, 200, { length: req.headers['content-length'] ?? null, chunked: req.headers['transfer-encoding'] ?? null });
    const r2 = await postMultipart(target('/up'), [{ name: 'file', filename: 'x.bin', contentType: 'application/octet-stream', data: () => Readable.from([Buffer.alloc(10)]) }]);
    expect(r2.json).toEqual({ length: null, chunked: 'chunked' });
  });

  it('is streamed: the upstream holds the first chunk before the source has made the second', async () => {
    let received = 0;
    let onData: (() => void) | null = null;
    handler = async (req, res) => {
      for await (const c of req) {
        received += (c as Buffer).length;
        onData?.();
      }
      json(res, 200, { received });
    };
    const CHUNK = 256 * 1024;
    // Each chunk is made only once the upstream has the previous one: a client that buffered the body would wait forever.
    async function* lockstep() {
      for (let i = 0; i < 8; i++) {
        if (i > 0) {
          const need = i * CHUNK;
          await new Promise<void>((resolve) => {
            const check = () => received >= need && resolve();
            onData = check;
            check();
          });
        }
        yield Buffer.alloc(CHUNK, i);
      }
    }
    const r = await postMultipart(target('/up', { limits: { ...LIMITS, totalMs: 10_000 } }), [
      { name: 'file', filename: 'big.bin', contentType: 'application/octet-stream', data: () => Readable.from(lockstep()) },
    ]);
    expect((r.json as { received: number }).received).toBeGreaterThan(8 * CHUNK);
  });

  it('memory does not grow with the upload: 512 MiB go up while the process grows by tens of MiB (chunks awaiting GC), not hundreds', async () => {
    handler = async (req, res) => {
      let n = 0;
      for await (const c of req) n += (c as Buffer).length;
      json(res, 200, { n });
    };
    const SIZE = 512 * 1024 * 1024;
    const CHUNK = 64 * 1024;
    async function* zeros() {
      for (let sent = 0; sent < SIZE; sent += CHUNK) yield Buffer.alloc(CHUNK); // a fresh buffer each time, as a file read makes
    }
    globalThis.gc?.();
    const before = process.memoryUsage();
    let peak = 0;
    const sample = setInterval(() => {
      const m = process.memoryUsage();
      peak = Math.max(peak, m.rss - before.rss, m.arrayBuffers - before.arrayBuffers);
    }, 10);
    try {
      const r = await postMultipart(target('/up', { limits: { ...LIMITS, idleMs: 5_000, totalMs: 60_000 } }), [
        { name: 'file', filename: 'big.bin', contentType: 'application/octet-stream', data: () => Readable.from(zeros()), size: SIZE },
      ]);
      expect((r.json as { n: number }).n).toBeGreaterThan(SIZE);
    } finally {
      clearInterval(sample);
    }
    console.log(`multipart upload of ${SIZE / 2 ** 20} MiB: peak growth ${(peak / 2 ** 20).toFixed(1)} MiB (rss or array buffers)`);
    expect(peak).toBeLessThan(SIZE / 4);
  }, 60_000);

  it('time limits: a long upload is no slow answer, an upstream that stops reading is a stalled upload, no answer after it is a first-byte time-out', async () => {
    // 5 chunks 300 ms apart (1.2 s, twice the first-byte limit), each within the idle limit: answered.
    handler = async (req, res) => json(res, 200, { n: (await bodyOf(req)).length });
    async function* slow() {
      for (let i = 0; i < 5; i++) {
        if (i) await sleep(300);
        yield Buffer.alloc(1000);
      }
    }
    const ok = await postMultipart(target('/up', { limits: { ...LIMITS, totalMs: 5_000 } }), [{ name: 'f', filename: 'f', contentType: 'application/octet-stream', data: () => Readable.from(slow()) }]);
    expect((ok.json as { n: number }).n).toBeGreaterThan(5000);

    // The upstream stops reading: once the socket buffers are full, nothing more goes up.
    handler = (req) => void req.pause();
    async function* endless() {
      for (;;) yield Buffer.alloc(64 * 1024);
    }
    let e = await failure(postMultipart(target('/up', { limits: { ...LIMITS, totalMs: 20_000 } }), [{ name: 'f', filename: 'f', contentType: 'application/octet-stream', data: () => Readable.from(endless()) }]));
    expect(e).toMatchObject({ code: 'upstream_timeout', message: "provider 'fake': stalled: the upload made no progress for 500 ms" });

    // All of it read, then no answer: the first-byte limit runs from the upload's end.
    handler = async (req) => void (await bodyOf(req));
    const started = performance.now();
    e = await failure(postMultipart(target('/up', { limits: { ...LIMITS, totalMs: 20_000 } }), [{ name: 'f', filename: 'f', contentType: 'application/octet-stream', data: () => Readable.from(slow()) }]));
    expect(e).toMatchObject({ code: 'upstream_timeout', message: "provider 'fake': timed out waiting for the first byte after 600 ms" });
    expect(performance.now() - started).toBeGreaterThan(1200 + 500);
  }, 30_000);
});

describe('download', () => {
  const readAll = async (r: Readable) => {
    const parts: Buffer[] = [];
    for await (const c of r) parts.push(c as Buffer);
    return Buffer.concat(parts);
  };

  it('GET: the bytes as a stream, with their type and length', async () => {
    const video = Buffer.alloc(300_000, 7);
    handler = (req, res) => {
      res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': String(video.length) });
      res.end(req.method === 'GET' ? video : undefined);
    };
    const d = await download(target('/v1/videos/v1/content'));
    expect(d.contentType).toBe('video/mp4');
    expect(d.contentLength).toBe(video.length);
    expect((await readAll(d.body)).equals(video)).toBe(true);
  });

  it('POST with a JSON body (speech): chunked, no length', async () => {
    let sent: unknown;
    handler = async (req, res) => {
      sent = JSON.parse((await bodyOf(req)).toString());
      res.writeHead(200, { 'content-type': 'audio/mpeg' });
      res.write(Buffer.from('ID3'));
      await sleep(50);
      res.end(Buffer.from('rest'));
    };
    const d = await download(target('/v1/audio/speech'), { json: { input: 'hi', voice: 'alloy' } });
    expect(sent).toEqual({ input: 'hi', voice: 'alloy' });
    expect(d.contentType).toBe('audio/mpeg');
    expect(d.contentLength).toBeNull();
    expect((await readAll(d.body)).toString()).toBe('ID3rest');
  });

  it('a failed status is classified before any byte is handed out', async () => {
    handler = (_req, res) => json(res, 503, { error: { message: 'busy' } });
    expect(await failure(download(target('/x')))).toMatchObject({ status: 503, code: 'upstream_error', retryable: true, message: "provider 'fake': answered HTTP 503: busy" });
  });

  it('an upstream that stalls mid-body fails the stream with upstream_timeout; a slow reader does not', async () => {
    handler = async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.write(Buffer.alloc(10));
      await sleep(2_000);
      res.end();
    };
    const d = await download(target('/x'));
    const e = await failure(readAll(d.body));
    expect(e).toMatchObject({ code: 'upstream_timeout', message: "provider 'fake': stalled: nothing received for 500 ms" });

    // 8 MiB, more than every buffer on the way holds: while we sit on a chunk the upstream waits on us.
    const SIZE = 8 * 1024 * 1024;
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.end(Buffer.alloc(SIZE));
    };
    const slow = await download(target('/x'));
    let n = 0;
    for await (const c of slow.body) {
      if (n === 0) await sleep(1_200); // more than twice the idle limit, on our side
      n += (c as Buffer).length;
    }
    expect(n).toBe(SIZE);
  });

  it('no headers within the first-byte limit', async () => {
    handler = () => {};
    expect(await failure(download(target('/x')))).toMatchObject({ code: 'upstream_timeout', message: "provider 'fake': timed out waiting for the first byte after 600 ms" });
  });

  it('destroying the body ends the upstream request', async () => {
    let closed = false;
    handler = (req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.write(Buffer.alloc(10));
      req.socket.on('close', () => (closed = true));
    };
    const d = await download(target('/x'));
    for await (const _ of d.body) break;
    await sleep(200);
    expect(closed).toBe(true);
  });
});
