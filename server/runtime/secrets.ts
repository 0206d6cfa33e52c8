import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

// Random bytes are drawn 4 KiB at a time: one system call serves many ids and tokens.
let pool = Buffer.alloc(0);
let offset = 0;
function nextByte(): number {
  if (offset >= pool.length) {
    pool = randomBytes(4096);
    offset = 0;
  }
  return pool[offset++]!;
}

/** Random base62 text; `length` 43 carries ~256 bits. */
export function randomToken(length: number): string {
  // Rejection sampling keeps every character uniform (256 is not a multiple of 62).
  let out = '';
  while (out.length < length) {
    const b = nextByte();
    if (b < 248) out += ALPHABET[b % 62];
  }
  return out;
}

export const newId = (prefix: string) => `${prefix}_${randomToken(20)}`;

/** SHA-256 is right for high-entropy secrets: no brute force to slow down, and lookups stay indexable. */
export function hashSecret(secret: string): string {
  // The one-shot form: a third of createHash's time, and this runs on every request.
  return hash('sha256', secret, 'hex');
}

export function constantTimeEqualHex(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y);
}

/** Compares two secrets of any length without leaking where they differ or their lengths. */
export function constantTimeEqual(a: string, b: string): boolean {
  return constantTimeEqualHex(hashSecret(a), hashSecret(b));
}

export const API_KEY_PREFIX = 'mg-';
export const newApiKey = () => API_KEY_PREFIX + randomToken(43);
export const displayPrefix = (key: string) => key.slice(0, API_KEY_PREFIX.length + 6);
