// Downloads an image a client referenced by URL, for providers that need the bytes inline.
// Guards against SSRF: every address the host resolves to must be public unicast (unless the
// operator allows private targets), checked at connect time so DNS rebinding cannot slip past.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import ipaddr from 'ipaddr.js';
import { Agent, request } from 'undici';
import { GatewayError } from '../runtime/errors.ts';

export type ImageFetchOptions = { allowPrivate: boolean; maxBytes: number; timeoutMs: number };

/** An image a client referenced: at most 20 MB (OpenAI's limit for a referenced image), within 15 s. */
export const MAX_IMAGE_BYTES = 20 * 1024 * 1024;
export const imageFetchOptions = (config: { allowPrivateImageUrls: boolean }): ImageFetchOptions => ({ allowPrivate: config.allowPrivateImageUrls, maxBytes: MAX_IMAGE_BYTES, timeoutMs: 15_000 });

const v4 = (hi: number, lo: number) => ipaddr.fromByteArray([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]) as ipaddr.IPv4;

/**
 * The IPv4 address an IPv6 one stands for, when traffic to it reaches that IPv4 host: IPv4-mapped
 * (`::ffff:a.b.c.d`), IPv4-translated (`::ffff:0:a.b.c.d`), NAT64's well-known prefix
 * (`64:ff9b::a.b.c.d`) and 6to4 (`2002:AABB:CCDD::`). `null` for the forms that embed one but are
 * never a public destination: IPv4-compatible (`::a.b.c.d`, deprecated; `[::127.0.0.1]` is written
 * `[::7f00:1]` in a URL) and local-use NAT64 (`64:ff9b:1::/48`). `undefined` for the rest.
 */
function embeddedIPv4(ip: ipaddr.IPv6): ipaddr.IPv4 | null | undefined {
  const p = ip.parts;
  const zeros = (from: number, to: number) => p.slice(from, to).every((x) => x === 0);
  if (zeros(0, 5) && p[5] === 0xffff) return v4(p[6]!, p[7]!);
  if (zeros(0, 4) && p[4] === 0xffff && p[5] === 0) return v4(p[6]!, p[7]!);
  if (zeros(0, 6)) return null;
  if (p[0] === 0x64 && p[1] === 0xff9b) return zeros(2, 6) ? v4(p[6]!, p[7]!) : null;
  if (p[0] === 0x2002) return v4(p[1]!, p[2]!);
  return undefined;
}

/**
 * Whether `address` is public unicast: what an image may be fetched from. An IPv6 address that
 * embeds an IPv4 one is judged by the IPv4 address it reaches (`::ffff:127.0.0.1` is loopback).
 */
export function isPublicAddress(address: string): boolean {
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    // ipaddr.js reads any IPv6 address ending in a dotted quad as IPv4-mapped (`::8.8.8.8` as
    // `::ffff:8.8.8.8`): the quad is written as two hex groups first, as a URL would write it.
    const dotted = address.includes(':') ? /(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(address) : null;
    const hex = (a: string, b: string) => ((Number(a) << 8) | Number(b)).toString(16);
    const written = dotted && dotted.slice(1).every((n) => Number(n) <= 255) ? `${address.slice(0, dotted.index)}${hex(dotted[1]!, dotted[2]!)}:${hex(dotted[3]!, dotted[4]!)}` : address;
    ip = ipaddr.parse(written);
  } catch {
    return false;
  }
  if (ip.kind() === 'ipv6') {
    const embedded = embeddedIPv4(ip as ipaddr.IPv6);
    if (embedded !== undefined) return embedded !== null && embedded.range() === 'unicast';
  }
  return ip.range() === 'unicast';
}

const refused = (url: string, why: string) => new GatewayError(400, 'invalid_request_error', 'invalid_image_url', `Cannot use image URL ${url}: ${why}.`);

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

function guardedLookup(hostname: string, options: object, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
    if (err) return callback(err, '');
    const bad = addresses.find((a) => !isPublicAddress(a.address));
    if (bad) {
      const e = new Error(`${hostname} resolves to a non-public address (${bad.address})`) as NodeJS.ErrnoException;
      e.code = 'ESSRF';
      return callback(e, '');
    }
    const all = (options as { all?: boolean }).all;
    return all ? callback(null, addresses) : callback(null, addresses[0]!.address, addresses[0]!.family);
  });
}

const publicOnly = new Agent({ connect: { lookup: guardedLookup, timeout: 10_000 } });
const anyTarget = new Agent({ connect: { timeout: 10_000 } });

export async function fetchImage(url: string, opts: ImageFetchOptions): Promise<{ mediaType: string; data: string }> {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw refused(url, 'not a valid URL');
  }
  if (u.protocol !== 'https:' && !(opts.allowPrivate && u.protocol === 'http:')) throw refused(url, 'only HTTPS URLs are fetched');
  const host = u.hostname.replace(/^\[|\]$/g, '');
  if (!opts.allowPrivate && ipaddr.isValid(host) && !isPublicAddress(host)) throw refused(url, 'private, loopback and link-local addresses are not allowed');
  let res;
  try {
    res = await request(u, {
      dispatcher: opts.allowPrivate ? anyTarget : publicOnly,
      headersTimeout: opts.timeoutMs,
      bodyTimeout: opts.timeoutMs,
      headers: { accept: 'image/*' },
    });
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { cause?: NodeJS.ErrnoException };
    if (e.code === 'ESSRF' || e.cause?.code === 'ESSRF') throw refused(url, 'private, loopback and link-local addresses are not allowed');
    throw refused(url, `download failed (${e.code ?? e.cause?.code ?? 'network error'})`);
  }
  if (res.statusCode !== 200) {
    await res.body.dump();
    throw refused(url, `the server answered ${res.statusCode}`);
  }
  const type = String(res.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (!type.startsWith('image/')) {
    await res.body.dump();
    throw refused(url, `it is not an image (${type || 'no content type'})`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of res.body) {
      size += chunk.length;
      if (size > opts.maxBytes) {
        res.body.destroy();
        throw refused(url, `it is larger than ${opts.maxBytes} bytes`);
      }
      chunks.push(chunk as Buffer);
    }
  } catch (err) {
    if (err instanceof GatewayError) throw err;
    // The image's host failed mid-body: the client's reference is at fault, not an upstream.
    const e = err as NodeJS.ErrnoException;
    throw refused(url, `download failed (${e.code ?? 'connection lost'})`);
  }
  return { mediaType: type, data: Buffer.concat(chunks).toString('base64') };
}
