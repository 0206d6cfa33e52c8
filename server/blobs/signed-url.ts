// Hosted copies (docs/api.md, "Images and video": a b64_json image may also carry a `url`): an unguessable link that any
// instance can verify without a database lookup and that works in an <img> without headers. The
// token is `<key>.<expiry>.<HMAC-SHA256 of both, 128 bits>`, key and MAC in base64url, keyed by a key derived from the
// gateway secret (so it changes with GATEWAY_SECRET and signs nothing else).
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { checkKey } from './store.ts';

export class UrlSigner {
  private readonly key: Buffer;
  constructor(secret: string) {
    this.key = createHash('sha256').update(`model-gateway hosted blobs\0${secret}`).digest();
  }

  /** The first 128 bits of the HMAC: unforgeable all the same, and the link stays under the router's 100-character path parameter limit. */
  private mac(payload: string): Buffer {
    return createHmac('sha256', this.key).update(payload).digest().subarray(0, 16);
  }

  /** The token for `blobKey`, valid until `expiresAt` (epoch ms). */
  sign(blobKey: string, expiresAt: number): string {
    const payload = `${Buffer.from(checkKey(blobKey)).toString('base64url')}.${Math.floor(expiresAt / 1000)}`;
    return `${payload}.${this.mac(payload).toString('base64url')}`;
  }

  /** The blob key a token names, or null when it is malformed, tampered with or expired. */
  verify(token: string, now: number): string | null {
    const parts = token.split('.');
    if (parts.length !== 3 || !/^\d{1,12}$/.test(parts[1]!)) return null;
    const given = Buffer.from(parts[2]!, 'base64url');
    const expected = this.mac(`${parts[0]}.${parts[1]}`);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    if (Number(parts[1]) * 1000 <= now) return null;
    return Buffer.from(parts[0]!, 'base64url').toString('utf8');
  }
}
