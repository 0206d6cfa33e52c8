// The pure parts of the image/video path: size and ratio mapping, and the MP4 movie-header reader.
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nearestOf, nearestRatio, nearestSize, parseRatio, ratio, ratioAsPixels } from '../../server/media/geometry.ts';
import { mp4Duration } from '../../server/media/mp4-duration.ts';

const GEMINI = ['1:1', '2:3', '3:2', '3:4', '4:3', '4:5', '5:4', '9:16', '16:9', '21:9'];
const GPT_IMAGE = ['1024x1024', '1536x1024', '1024x1536'];

describe('geometry', () => {
  it('ratios reduce, and the nearest is judged on the log of the ratio', () => {
    expect(ratio({ w: 1920, h: 1080 })).toBe('16:9');
    expect(ratio({ w: 1000, h: 1000 })).toBe('1:1');
    expect(nearestRatio({ w: 1920, h: 1080 }, GEMINI)).toBe('16:9');
    expect(nearestRatio({ w: 2, h: 1 }, GEMINI)).toBe('16:9');
    expect(nearestRatio({ w: 1, h: 3 }, GEMINI)).toBe('9:16');
    expect(nearestRatio({ w: 7, h: 5 }, GEMINI)).toBe('4:3');
    expect(nearestRatio({ w: 1, h: 8 }, ['16:9', '9:16'])).toBe('9:16');
  });

  it('the nearest pixel size: ratio first, then area', () => {
    expect(nearestSize({ w: 1000, h: 1000 }, GPT_IMAGE)).toBe('1024x1024');
    expect(nearestSize({ w: 1920, h: 1080 }, GPT_IMAGE)).toBe('1536x1024');
    expect(nearestSize({ w: 256, h: 400 }, GPT_IMAGE)).toBe('1024x1536');
    expect(nearestSize({ w: 300, h: 300 }, ['256x256', '512x512', '1024x1024'])).toBe('256x256');
    expect(nearestSize(ratioAsPixels(parseRatio('16:9')), ['1024x1024', '1792x1024', '1024x1792'])).toBe('1792x1024');
  });

  it('nearestOf prefers the larger on a tie', () => {
    expect(nearestOf(5, [4, 6, 8])).toBe(6);
    expect(nearestOf(7, [4, 6, 8])).toBe(8);
    expect(nearestOf(0, [4, 6, 8])).toBe(4);
    expect(nearestOf(10, [5, 6, 7, 8])).toBe(8);
  });

  it('property: the chosen ratio is an allowed one and no allowed ratio is nearer', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 4000 }), fc.integer({ min: 1, max: 4000 }), (w, h) => {
        const r = nearestRatio({ w, h }, GEMINI);
        const d = (s: string) => Math.abs(Math.log(parseRatio(s).w / parseRatio(s).h) - Math.log(w / h));
        return GEMINI.includes(r) && GEMINI.every((a) => d(a) >= d(r) - 1e-9);
      }),
    );
  });
});

describe('mp4Duration', () => {
  it('reads the movie header, before or after the media data, and says null for anything else', async () => {
    expect(await mp4Duration(createReadStream(new URL('./fixtures/clip-2s.mp4', import.meta.url)))).toBe(2);
    expect(await mp4Duration(createReadStream(new URL('./fixtures/clip-3s-silent.mp4', import.meta.url)))).toBe(3);
    expect(await mp4Duration(Readable.from([Buffer.from('not a video at all')]))).toBeNull();
    expect(await mp4Duration(Readable.from([]))).toBeNull();
  });

  it('works whatever the chunking of the stream', async () => {
    const bytes = await new Promise<Buffer>((resolve) => {
      const chunks: Buffer[] = [];
      createReadStream(new URL('./fixtures/clip-3s-silent.mp4', import.meta.url)).on('data', (c) => chunks.push(c as Buffer)).on('end', () => resolve(Buffer.concat(chunks)));
    });
    for (const size of [1, 7, 100, 4096]) {
      const parts: Buffer[] = [];
      for (let i = 0; i < bytes.length; i += size) parts.push(bytes.subarray(i, i + size));
      expect(await mp4Duration(Readable.from(parts))).toBe(3);
    }
  });
});
