// The most seconds of audio a WAV file given in base64 can play, from its header and its size,
// without decoding the rest: uncompressed audio (PCM, float, A-law, μ-law) has a fixed number of
// bytes per second, so its bytes say how long it is, whatever its header claims of the data's
// length. Compressed audio has no such floor (silence costs next to nothing), so it gets null.
import { base64Bytes, base64Length } from './base64-bytes.ts';

/** Chunks a WAV file may have before its audio data (LIST, fact, bext, …). */
const MAX_CHUNKS = 16;

/** PCM, IEEE float, A-law, μ-law; 0xFFFE (extensible) when its sub-format is one of these. */
const FIXED_RATE = new Set([0x0001, 0x0003, 0x0006, 0x0007]);

const le16 = (b: Uint8Array, i: number) => b[i]! | (b[i + 1]! << 8);
const le32 = (b: Uint8Array, i: number) => (b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16) | (b[i + 3]! << 24)) >>> 0;
const ascii = (b: Uint8Array, i: number, s: string) => s.split('').every((c, k) => b[i + k] === c.charCodeAt(0));

/**
 * Seconds of uncompressed audio in a base64-encoded WAV file: the bytes after its data chunk's
 * header over its bytes per second (sample rate × the smaller of its block size and channels ×
 * bytes per sample). Null when it is not a RIFF/WAVE file of fixed-rate audio, or cut short.
 */
export function wavSeconds(data: string): number | null {
  const head = base64Bytes(data, 0, 12);
  if (!head || !ascii(head, 0, 'RIFF') || !ascii(head, 8, 'WAVE')) return null;
  const size = base64Length(data);
  let at = 12;
  let bytesPerSecond = 0;
  for (let n = 0; n < MAX_CHUNKS; n++) {
    const chunk = base64Bytes(data, at, 8);
    if (!chunk) return null;
    const length = le32(chunk, 4);
    if (ascii(chunk, 0, 'fmt ')) {
      const fmt = base64Bytes(data, at + 8, Math.min(length, 26));
      if (!fmt || fmt.length < 16) return null;
      let format = le16(fmt, 0);
      if (format === 0xfffe && fmt.length >= 26) format = le16(fmt, 24);
      if (!FIXED_RATE.has(format)) return null;
      const channels = le16(fmt, 2);
      const rate = le32(fmt, 4);
      const block = le16(fmt, 12);
      const frame = channels * Math.ceil(le16(fmt, 14) / 8);
      const bytesPerFrame = Math.min(block || frame, frame || block);
      if (!rate || !bytesPerFrame) return null;
      bytesPerSecond = rate * bytesPerFrame;
    } else if (ascii(chunk, 0, 'data')) {
      // The data's declared length is not trusted (streamed WAVs write 0 or 0xFFFFFFFF): every byte after counts.
      return bytesPerSecond ? Math.max(0, size - at - 8) / bytesPerSecond : null;
    }
    // Chunks are padded to an even length.
    at += 8 + length + (length & 1);
  }
  return null;
}
