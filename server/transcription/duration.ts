// The audio's real duration, read from its container with music-metadata (streamed: the file is
// never held whole). Used to bill per audio minute and to lay estimated subtitles over the audio.
import type { Readable } from 'node:stream';

/** Seconds of audio, or null when the container does not say. */
export async function audioDuration(body: Readable, mediaType: string, size?: number): Promise<number | null> {
  try {
    // Loaded with the first transcription: ~2.5 MB of heap a gateway without one never needs.
    const { parseStream } = await import('music-metadata');
    const meta = await parseStream(body, { mimeType: mediaType, ...(size !== undefined ? { size } : {}) }, { duration: true, skipCovers: true });
    const d = meta.format.duration;
    return typeof d === 'number' && Number.isFinite(d) && d > 0 ? d : null;
  } catch {
    return null;
  } finally {
    body.destroy();
  }
}
