// Downloading a client's image reference: a host that fails is the client's reference at fault
// (400 invalid_image_url), never a 500 and never blamed on an upstream.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { fetchImage, isPublicAddress } from '../../server/media/fetch-image.ts';

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

// The SSRF guard (issue 30): every way of writing a loopback, private, link-local or otherwise
// non-public IPv4 address inside an IPv6 one is refused like the address itself; an IPv6 address
// that embeds a public IPv4 one is judged by it.
const denied: [string, string][] = [
  ['IPv4-compatible loopback', '::127.0.0.1'],
  ['IPv4-compatible loopback, as a URL writes it', '::7f00:1'],
  ['IPv4-compatible, any address (deprecated, never routed)', '::8.8.8.8'],
  ['IPv4-mapped loopback', '::ffff:127.0.0.1'],
  ['IPv4-mapped loopback, hex', '::ffff:7f00:1'],
  ['IPv4-mapped private', '::ffff:10.0.0.1'],
  ['IPv4-mapped link-local (cloud metadata)', '::ffff:169.254.169.254'],
  ['IPv4-translated loopback', '::ffff:0:127.0.0.1'],
  ['NAT64 loopback', '64:ff9b::127.0.0.1'],
  ['NAT64 private', '64:ff9b::c0a8:101'],
  ['local-use NAT64', '64:ff9b:1::a00:1'],
  ['6to4 of loopback', '2002:7f00:1::'],
  ['6to4 of a private address', '2002:a00:1::1'],
  ['Teredo', '2001:0:4136:e378:8000:63bf:3fff:fdd2'],
  ['loopback', '::1'],
  ['unspecified', '::'],
  ['unique local', 'fd00::1'],
  ['link-local', 'fe80::1'],
  ['IPv4 loopback', '127.0.0.1'],
  ['IPv4 private', '192.168.1.1'],
  ['IPv4 link-local', '169.254.169.254'],
  ['IPv4 carrier-grade NAT', '100.64.0.1'],
];
const allowed: [string, string][] = [
  ['public IPv4', '8.8.8.8'],
  ['public IPv6', '2606:4700:4700::1111'],
  ['IPv4-mapped public', '::ffff:8.8.8.8'],
  ['NAT64 of a public address (DNS64 networks)', '64:ff9b::808:808'],
  ['6to4 of a public address', '2002:808:808::1'],
];

it.each(denied)('%s (%s) is not public', (_name, address) => {
  expect(isPublicAddress(address)).toBe(false);
});

it.each(allowed)('%s (%s) is public', (_name, address) => {
  expect(isPublicAddress(address)).toBe(true);
});

it.each(denied.filter(([, a]) => a.includes(':')))('an image URL at [%s] is refused before any connection (%s)', async (_name, address) => {
  const url = `https://[${address}]/cat.png`;
  await expect(fetchImage(url, { ...opts, allowPrivate: false })).rejects.toMatchObject({
    status: 400,
    code: 'invalid_image_url',
    message: `Cannot use image URL ${url}: private, loopback and link-local addresses are not allowed.`,
  });
});
