// An upload cut short at every point, a client that vanishes mid-upload, a body that never ends,
// a field past its limit (issue 30): each answered with its own error, the connection closed, and
// the gateway — in its own process here, so that a crash is seen rather than suffered — alive and
// serving the next upload. A key's first request (its authentication not cached yet) and a known
// key's take different paths before the body is read: both are tried.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnGateway, type GatewayProcess } from '../helpers/gateway-process.ts';
import { rawRequest, type RawAnswer } from '../helpers/raw-http.ts';
import { sttConfig, startFakeStt, type FakeStt } from './fake-stt.ts';

const MP3 = readFileSync(new URL('../fixtures/audio/speech.mp3', import.meta.url));
const BOUNDARY = '----mg-robust';

let fake: FakeStt;
let gw: GatewayProcess;
let spare: string[];

beforeAll(async () => {
  fake = await startFakeStt();
  gw = await spawnGateway({ config: sttConfig(fake.url), env: { JOB_POLL_MS: '50' }, keys: 64 });
  spare = [...gw.keys];
});
afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

/** A key never used yet (its authentication goes to the database), or one known to the cache. */
const freshKey = () => spare.pop()!;
let warmKey = '';

const fieldPart = (name: string, value: string) => `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
const filePart = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="speech.mp3"\r\nContent-Type: audio/mpeg\r\n\r\n`;
const closing = `\r\n--${BOUNDARY}--\r\n`;
const upload = Buffer.concat([Buffer.from(fieldPart('model', 'whisper-1') + filePart), MP3, Buffer.from(closing)]);
const at = (s: string, plus = 0) => upload.indexOf(s) + plus;

const head = (path: string, key: string, length: number | null, extra = '') =>
  `POST ${path} HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer ${key}\r\nContent-Type: multipart/form-data; boundary=${BOUNDARY}\r\n` +
  (length === null ? 'Transfer-Encoding: chunked' : `Content-Length: ${length}`) +
  extra;

/** Every place a real upload can be cut: in and between each of its parts. */
const cuts: [string, number][] = [
  ['in the first boundary', 3],
  ["in the field's headers", at('name="model"', 5)],
  ["in the field's value", at('whisper-1', 4)],
  ['after the field', at(filePart)],
  ["in the file part's headers", at('filename=', 4)],
  ["after the file part's headers", at(filePart, filePart.length)],
  ['after 1 byte of the file', at(filePart, filePart.length + 1)],
  ['after 100 bytes of the file', at(filePart, filePart.length + 100)],
  ['in the middle of the file', at(filePart, filePart.length + (MP3.length >> 1))],
  ['after the whole file', at(filePart, filePart.length + MP3.length)],
  ['in the closing boundary', upload.length - closing.length + 6],
  ['before the closing boundary’s final dashes', upload.length - 4],
];

const expectRefused = (r: RawAnswer, status: number, code: string) => {
  expect(r.status, r.body).toBe(status);
  expect(JSON.parse(r.body).error.code).toBe(code);
  // The gateway's own words, never the parser's.
  expect(r.body).not.toMatch(/terminated early|Unexpected end|Dicer|busboy/i);
  expect(r.headers.connection).toBe('close');
  expect(r.closed).toBe(true);
};

/** A whole, valid upload through the same gateway: it still serves. */
async function servesAnUpload(key: string, path = '/v1/audio/transcriptions') {
  const r = await rawRequest(gw.url, head(path, key, upload.length), upload);
  expect(r.status, r.body).toBe(path.endsWith('/jobs') ? 202 : 200);
}

describe.each(['/v1/audio/transcriptions', '/v1/audio/transcriptions/jobs'])('%s', (path) => {
  beforeAll(async () => {
    warmKey ||= freshKey();
    await servesAnUpload(warmKey, path);
  });

  it.each(cuts)('cut %s: 400 invalid_multipart with a known key and with a first-time key; the gateway lives', async (_where, cut) => {
    for (const key of [warmKey, freshKey()]) {
      const r = await rawRequest(gw.url, head(path, key, cut), upload.subarray(0, cut));
      expectRefused(r, 400, 'invalid_multipart');
      expect(JSON.parse(r.body).error.message).toMatch(/^The multipart form ends before its closing boundary/);
    }
    expect(gw.alive(), gw.stderr()).toBe(true);
  });

  it('a client that vanishes mid-upload, at several points, with either key: the gateway lives and serves the next upload', async () => {
    for (const cut of [10, at(filePart, filePart.length + 1), at(filePart, filePart.length + 5000), upload.length - 3]) {
      for (const key of [warmKey, freshKey()]) {
        await rawRequest(gw.url, head(path, key, upload.length), upload, { destroyAfter: cut });
      }
    }
    await new Promise((r) => setTimeout(r, 200));
    expect(gw.alive(), gw.stderr()).toBe(true);
    await servesAnUpload(warmKey, path);
  });
});

describe('bounds of the whole body', () => {
  it('declared larger than the file limit and the fields’ allowance: 413 before a byte of it is read', async () => {
    const r = await rawRequest(gw.url, head('/v1/audio/transcriptions', warmKey, 30 * 1024 * 1024), Buffer.alloc(0));
    expectRefused(r, 413, 'payload_too_large');
    expect(r.ms).toBeLessThan(2_000);
  });

  it('30 MiB of garbage sent chunked: 413 once the bound is passed, the rest never read', async () => {
    // Chunked transfer coding by hand: 1 MiB chunks, offered until the gateway answers.
    const mib = Buffer.alloc(1024 * 1024, 0x61);
    const chunk = Buffer.concat([Buffer.from(`${mib.length.toString(16)}\r\n`), mib, Buffer.from('\r\n')]);
    const r = await rawRequest(gw.url, head('/v1/audio/transcriptions', warmKey, null), Buffer.alloc(0), { keepSending: chunk, timeoutMs: 20_000 });
    expectRefused(r, 413, 'payload_too_large');
    // The answer, then an orderly end while the client was still sending: no reset that could
    // overtake the answer (the gateway lingers, reading and dropping, before it closes).
    expect(r.reset).toBe(false);
    expect(JSON.parse(r.body).error.message).toBe('The request body is larger than this endpoint accepts (25 MB of file and 256 KiB for the other fields).');
    // 25.25 MiB read, a few MiB more in the sockets' buffers: far from all that was offered.
    expect(r.written).toBeLessThan(40 * 1024 * 1024);
    expect(gw.alive()).toBe(true);
  });

  it('a field over 64 KiB: 413 naming the field, not silently truncated', async () => {
    const body = Buffer.from(fieldPart('model', 'whisper-1') + fieldPart('prompt', 'x'.repeat(64 * 1024 + 1)) + `--${BOUNDARY}--\r\n`);
    const r = await rawRequest(gw.url, head('/v1/audio/transcriptions', warmKey, body.length), body);
    expectRefused(r, 413, 'payload_too_large');
    expect(JSON.parse(r.body).error).toMatchObject({ param: 'prompt', message: "The form field 'prompt' is larger than 64 KiB." });
    // Exactly 64 KiB is a field like any other.
    const ok = Buffer.concat([Buffer.from(fieldPart('model', 'whisper-1') + fieldPart('prompt', 'x'.repeat(64 * 1024)) + filePart), MP3, Buffer.from(closing)]);
    expect((await rawRequest(gw.url, head('/v1/audio/transcriptions', warmKey, ok.length), ok)).status).toBe(200);
  });

  it('a multipart Content-Type without a boundary, and garbage in which no part is found: 400 invalid_multipart', async () => {
    const noBoundary = await rawRequest(gw.url, head('/v1/audio/transcriptions', warmKey, 4).replace(/; boundary=\S+/, ''), Buffer.from('abcd'));
    expectRefused(noBoundary, 400, 'invalid_multipart');
    const garbage = Buffer.alloc(1000, 0x61);
    expectRefused(await rawRequest(gw.url, head('/v1/audio/transcriptions', warmKey, garbage.length), garbage), 400, 'invalid_multipart');
  });

  it('a multipart body sent to a JSON route: 415 at once, the connection closed', async () => {
    const r = await rawRequest(gw.url, head('/v1/embeddings', warmKey, upload.length), upload);
    expectRefused(r, 415, 'unsupported_media_type');
  });

  it('the gateway is alive after all of it', async () => {
    expect(gw.alive(), gw.stderr()).toBe(true);
    await servesAnUpload(freshKey());
  });
});
