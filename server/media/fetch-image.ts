// Downloads an image a client referenced by URL, for providers that need the bytes inline.
// Guards against SSRF: every address the host resolves to must be public unicast (unless the
// operator allows private targets), checked at connect time so DNS rebinding cannot slip past.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import ipaddr from 'ipaddr.js';
import { Agent, request } from 'undici';
import { GatewayError } from '../http/errors.ts';

export type ImageFetchOptions = { allowPrivate: boolean; maxBytes: number; timeoutMs: number };

/** An image a client referenced: at most 20 MB (OpenAI's limit for a referenced image), within 15 s. */
export const MAX_IMAGE_BYTES = 20 * 1024 * 1024;
export const imageFetchOptions = (config: { allowPrivateImageUrls: boolean }): ImageFetchOptions => ({ allowPrivate: config.allowPrivateImageUrls, maxBytes: MAX_IMAGE_BYTES, timeoutMs: 15_000 });

export function isPublicAddress(address: string): boolean {
  try {
    let ip = ipaddr.parse(address);
    if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address();
    return ip.range() === 'unicast';
  } catch {
    return false;
  }
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

const publicOnly = new Agent({ connect: { lookup: guardedLookup as never, timeout: 10_000 } });
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
