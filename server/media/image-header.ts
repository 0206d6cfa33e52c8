// An image's pixel size, read from its file header (PNG, JPEG, GIF, WebP) in base64 text without
// decoding the image or the rest of the text: a few dozen bytes, plus for a JPEG four bytes per
// segment before its frame header (segments are skipped by their lengths). The hold of an image
// input is sized by it (pipeline/estimate.ts). Written here rather than taken from a package
// (image-size reads a decoded buffer, so the base64 would be decoded first).
import { base64Bytes } from './base64-bytes.ts';
import type { Dimensions } from './geometry.ts';

/** Segments a JPEG may have before its frame header; past them the size is unknown (a hold then takes the largest). */
const MAX_JPEG_SEGMENTS = 64;

const be16 = (b: Uint8Array, i: number) => (b[i]! << 8) | b[i + 1]!;
const le16 = (b: Uint8Array, i: number) => b[i]! | (b[i + 1]! << 8);
const be32 = (b: Uint8Array, i: number) => ((b[i]! << 24) >>> 0) + (b[i + 1]! << 16) + (b[i + 2]! << 8) + b[i + 3]!;
const le24 = (b: Uint8Array, i: number) => b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16);
const ascii = (b: Uint8Array, i: number, s: string) => s.split('').every((c, k) => b[i + k] === c.charCodeAt(0));

const sized = (w: number, h: number): Dimensions | null => (w > 0 && h > 0 ? { w, h } : null);

/** The width and height the header of a base64-encoded image states, or null when it is none of the four formats or cut short. */
export function imageSize(data: string): Dimensions | null {
  const head = base64Bytes(data, 0, 30) ?? base64Bytes(data, 0, 10);
  if (!head) return null;
  // PNG: the signature, then the IHDR chunk: width and height, 4 bytes each, big-endian.
  if (head[0] === 0x89 && ascii(head, 1, 'PNG') && ascii(head, 12, 'IHDR')) return sized(be32(head, 16), be32(head, 20));
  // GIF: the logical screen's width and height, 2 bytes each, little-endian.
  if (ascii(head, 0, 'GIF8')) return sized(le16(head, 6), le16(head, 8));
  if (ascii(head, 0, 'RIFF') && ascii(head, 8, 'WEBP') && head.length >= 30) return webpSize(head);
  if (head[0] === 0xff && head[1] === 0xd8) return jpegSize(data);
  return null;
}

/** The first chunk of a WebP file: lossy (VP8), lossless (VP8L) or extended (VP8X, the canvas). */
function webpSize(b: Uint8Array): Dimensions | null {
  if (ascii(b, 12, 'VP8 ')) {
    // The key frame's start code, then 14-bit width and height (2 bits of scaling above them).
    if (b[23] !== 0x9d || b[24] !== 0x01 || b[25] !== 0x2a) return null;
    return sized(le16(b, 26) & 0x3fff, le16(b, 28) & 0x3fff);
  }
  if (ascii(b, 12, 'VP8L')) {
    if (b[20] !== 0x2f) return null;
    const bits = b[21]! | (b[22]! << 8) | (b[23]! << 16) | (b[24]! << 24);
    return sized((bits & 0x3fff) + 1, ((bits >>> 14) & 0x3fff) + 1);
  }
  if (ascii(b, 12, 'VP8X')) return sized(le24(b, 24) + 1, le24(b, 27) + 1);
  return null;
}

/**
 * A JPEG's size is in its frame header (SOF0–SOF15 but DHT, JPG and DAC), after any number of
 * segments (EXIF, ICC profiles, tables) that are skipped by their lengths, as a decoder does.
 */
function jpegSize(data: string): Dimensions | null {
  let at = 2;
  for (let n = 0; n < MAX_JPEG_SEGMENTS; n++) {
    const m = base64Bytes(data, at, 4);
    if (!m || m[0] !== 0xff) return null;
    const marker = m[1]!;
    // Fill bytes before a marker.
    if (marker === 0xff) {
      at += 1;
      continue;
    }
    // Markers without a length: TEM, RSTn, SOI.
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd8)) {
      at += 2;
      continue;
    }
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      // Length (2), precision (1), height (2), width (2).
      const f = base64Bytes(data, at + 5, 4);
      return f ? sized(be16(f, 2), be16(f, 0)) : null;
    }
    // EOI or the scan before any frame header: not a JPEG a provider reads.
    if (marker === 0xd9 || marker === 0xda) return null;
    at += 2 + be16(m, 2);
  }
  return null;
}
