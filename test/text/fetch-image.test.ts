// Downloading a client's image reference: a host that fails is the client's reference at fault
// (400 invalid_image_url), never a 500 and never blamed on an upstream.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { fetchImage } from '../../server/media/fetch-image.ts';

let base: string;
const server = createServer((req, res) => {
  if (req.url === '/cut.png') {
    // Headers and half the bytes, then the connection drops.
    res.writeHead(200, { 'content-type': 'image/png', 'content-length': '1000' });
    res.write(Buffer.alloc(500));
    setTimeout(() => res.socket?.destroy(), 20);
    return;
  }
  res.writeHead(200, { 'content-type': 'image/png' });
  res.end(Buffer.from([0x89, 0x50, 0x4e, 0x47]));
});
beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const opts = { allowPrivate: true, maxBytes: 1024 * 1024, timeoutMs: 5_000 };

it('reads a whole image', async () => {
  expect(await fetchImage(`${base}/ok.png`, opts)).toEqual({ mediaType: 'image/png', data: 'iVBORw==' });
});

it('a host that drops the connection mid-body is 400 invalid_image_url naming the failure class', async () => {
  await expect(fetchImage(`${base}/cut.png`, opts)).rejects.toMatchObject({
    status: 400,
    code: 'invalid_image_url',
    message: `Cannot use image URL ${base}/cut.png: download failed (UND_ERR_SOCKET).`,
  });
});

it('a host that refuses the connection is 400 with the error class, not the socket message', async () => {
  await expect(fetchImage('http://127.0.0.1:9/x.png', opts)).rejects.toMatchObject({
    status: 400,
    code: 'invalid_image_url',
    message: 'Cannot use image URL http://127.0.0.1:9/x.png: download failed (ECONNREFUSED).',
  });
});
