// The 44-byte RIFF/WAVE header of uncompressed PCM (little-endian, as WAV is).
export function wavHeader(f: { sampleRate: number; channels: number; bitsPerSample: number; dataBytes: number }): Buffer {
  const h = Buffer.alloc(44);
  const blockAlign = (f.channels * f.bitsPerSample) / 8;
  h.write('RIFF', 0, 'ascii');
  h.writeUInt32LE(36 + f.dataBytes, 4);
  h.write('WAVE', 8, 'ascii');
  h.write('fmt ', 12, 'ascii');
  h.writeUInt32LE(16, 16); // fmt chunk size
  h.writeUInt16LE(1, 20); // PCM
  h.writeUInt16LE(f.channels, 22);
  h.writeUInt32LE(f.sampleRate, 24);
  h.writeUInt32LE(f.sampleRate * blockAlign, 28);
  h.writeUInt16LE(blockAlign, 32);
  h.writeUInt16LE(f.bitsPerSample, 34);
  h.write('data', 36, 'ascii');
  h.writeUInt32LE(f.dataBytes, 40);
  return h;
}
