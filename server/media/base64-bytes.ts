// Random access into base64 text: the bytes at an offset, decoding only the groups of four
// characters that hold them. A file's header (an image's size, a WAV's format) is read this way
// from an inline upload without decoding the rest of it, however large it is.

const VALUES = new Int8Array(128).fill(-1);
'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'.split('').forEach((c, i) => (VALUES[c.charCodeAt(0)] = i));
// The URL-safe alphabet's two letters (RFC 4648 §5).
VALUES['-'.charCodeAt(0)] = 62;
VALUES['_'.charCodeAt(0)] = 63;

/** How many bytes `data` (base64 without whitespace) encodes. */
export function base64Length(data: string): number {
  let n = data.length;
  while (n > 0 && data.charCodeAt(n - 1) === 61 /* = */) n--;
  return Math.floor((n * 3) / 4);
}

/**
 * Bytes [offset, offset + length) of the file `data` encodes (base64 or base64url, no whitespace),
 * or null when they are not all there or a character on the way is not base64 (the caller then
 * knows nothing: nothing is guessed from Node's lenient decoder, which skips such characters).
 */
export function base64Bytes(data: string, offset: number, length: number): Uint8Array | null {
  if (offset < 0 || length <= 0 || offset + length > base64Length(data)) return null;
  const out = new Uint8Array(length);
  const first = Math.floor(offset / 3);
  const last = Math.floor((offset + length - 1) / 3);
  let at = 0;
  for (let g = first; g <= last; g++) {
    const c = 4 * g;
    const a = sextet(data, c);
    const b = sextet(data, c + 1);
    const x = sextet(data, c + 2);
    const y = sextet(data, c + 3);
    if (a < 0 || b < 0 || x === -1 || y === -1) return null;
    // -2: padding or the end of the text, where the group ends early.
    const bytes = [(a << 2) | (b >> 4), ((b & 15) << 4) | (x < 0 ? 0 : x >> 2), ((x < 0 ? 0 : x & 3) << 6) | (y < 0 ? 0 : y)];
    for (let i = 0; i < 3; i++) {
      const pos = 3 * g + i;
      if (pos >= offset && pos < offset + length) out[at++] = bytes[i]!;
    }
  }
  return at === length ? out : null;
}

/** The 6-bit value of the character at `i`: -2 past the end or at padding, -1 for a character that is not base64. */
function sextet(data: string, i: number): number {
  if (i >= data.length) return -2;
  const code = data.charCodeAt(i);
  if (code === 61) return -2;
  return code < 128 ? VALUES[code]! : -1;
}
