// The duration an MP4/QuickTime file declares in its movie header (`moov/mvhd`), read from a
// stream: boxes before it (a large `mdat` when the file was not made "fast start") are skipped,
// not held. The audio metadata parser reports durations from audio tracks only; a silent video
// (Veo 2, many OpenRouter models) needs this.
import type { Readable } from 'node:stream';

/** Pulls exact byte counts out of a stream, skipping without keeping what it passes over. */
class ByteReader {
  private buffered: Buffer = Buffer.alloc(0);
  private readonly it: AsyncIterator<Buffer>;
  private ended = false;
  constructor(stream: Readable) {
    this.it = stream[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  }
  private async more(): Promise<boolean> {
    if (this.ended) return false;
    const next = await this.it.next();
    if (next.done) {
      this.ended = true;
      return false;
    }
    this.buffered = this.buffered.length ? Buffer.concat([this.buffered, next.value]) : next.value;
    return true;
  }
  async read(n: number): Promise<Buffer | null> {
    while (this.buffered.length < n) if (!(await this.more())) return null;
    const out = this.buffered.subarray(0, n);
    this.buffered = this.buffered.subarray(n);
    return out;
  }
  async skip(n: number): Promise<boolean> {
    while (n > 0) {
      if (!this.buffered.length && !(await this.more())) return false;
      const take = Math.min(n, this.buffered.length);
      this.buffered = this.buffered.subarray(take);
      n -= take;
    }
    return true;
  }
}

/** One box header: its type and the size of its payload (null: it runs to the end of the file). */
async function header(r: ByteReader): Promise<{ type: string; payload: number | null } | null> {
  const h = await r.read(8);
  if (!h) return null;
  const size = h.readUInt32BE(0);
  const type = h.toString('latin1', 4, 8);
  if (size === 1) {
    const large = await r.read(8);
    if (!large) return null;
    return { type, payload: Number(large.readBigUInt64BE(0)) - 16 };
  }
  return { type, payload: size === 0 ? null : size - 8 };
}

/** Seconds the movie header declares, or null when the stream is not an MP4 with one. */
export async function mp4Duration(stream: Readable): Promise<number | null> {
  const r = new ByteReader(stream);
  let inMoov = false;
  let moovLeft = Infinity;
  for (let boxes = 0; boxes < 10_000; boxes++) {
    const box = await header(r);
    if (!box || box.payload === null || box.payload < 0) return null;
    if (inMoov) {
      moovLeft -= 8 + box.payload;
      if (moovLeft < 0) return null;
    }
    if (box.type === 'moov') {
      inMoov = true;
      moovLeft = box.payload;
      continue;
    }
    if (inMoov && box.type === 'mvhd') {
      const body = await r.read(Math.min(box.payload, 32));
      if (!body) return null;
      const v1 = body[0] === 1;
      const timescale = v1 ? body.readUInt32BE(20) : body.readUInt32BE(12);
      const duration = v1 ? Number(body.readBigUInt64BE(24)) : body.readUInt32BE(16);
      return timescale > 0 ? duration / timescale : null;
    }
    if (!(await r.skip(box.payload))) return null;
  }
  return null;
}
