// Which audio container an upload is, from its first bytes (not its name): the formats the spec
// accepts (mp3, mp4, mpeg, mpga, m4a, wav, webm) and nothing else.

export type AudioFormat = 'mp3' | 'mp4' | 'm4a' | 'mpeg' | 'mpga' | 'wav' | 'webm';

export const ACCEPTED = 'mp3, mp4, mpeg, mpga, m4a, wav, webm';

/** Bytes needed to tell the formats apart. */
export const SNIFF_BYTES = 12;

/** The container's media type, as upstreams and the blob store are told. */
export const MEDIA_TYPES: Record<AudioFormat, string> = {
  mp3: 'audio/mpeg',
  mpga: 'audio/mpeg',
  mpeg: 'video/mpeg',
  mp4: 'audio/mp4',
  m4a: 'audio/mp4',
  wav: 'audio/wav',
  webm: 'audio/webm',
};

/** An MPEG audio frame header: 11 sync bits, a valid version and layer. */
function mpegAudioFrame(b: Uint8Array): 'mp3' | 'mpga' | null {
  if (b.length < 2 || b[0] !== 0xff || (b[1]! & 0xe0) !== 0xe0) return null;
  const version = (b[1]! >> 3) & 0x3;
  const layer = (b[1]! >> 1) & 0x3;
  if (version === 1 || layer === 0) return null; // reserved values
  return layer === 1 ? 'mp3' : 'mpga'; // layer III is MP3; layers I and II are plain MPEG audio
}

export function sniffAudio(head: Uint8Array): AudioFormat | null {
  const b = Buffer.from(head.buffer, head.byteOffset, head.byteLength);
  if (b.length >= 12 && b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WAVE') return 'wav';
  if (b.length >= 3 && b.toString('latin1', 0, 3) === 'ID3') return 'mp3';
  if (b.length >= 4 && b[0] === 0x1a && b[1] === 0x45 && b[2] === 0xdf && b[3] === 0xa3) return 'webm';
  if (b.length >= 12 && b.toString('latin1', 4, 8) === 'ftyp') {
    const brand = b.toString('latin1', 8, 12);
    return /^M4[AB] /.test(brand) ? 'm4a' : 'mp4';
  }
  if (b.length >= 4 && b[0] === 0 && b[1] === 0 && b[2] === 1 && (b[3] === 0xba || b[3] === 0xb3)) return 'mpeg';
  return mpegAudioFrame(b);
}
