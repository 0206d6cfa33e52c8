// ElevenLabs Scribe (`POST /speech-to-text`, multipart), asked for word timestamps; spaces and
// audio events come as entries of their own and are left out of the words.
import type { MultipartField } from '../../upstream/multipart.ts';
import { postMultipart } from '../../upstream/http.ts';
import type { TranscriptionAdapter } from '../transcription.ts';
import { vendorTarget } from '../vendor-client.ts';
import { asWire } from '../../upstream/json.ts';
import type * as W from './wire.ts';
import { elevenlabsClient } from './client.ts';

export const elevenLabsTranscription: TranscriptionAdapter = {
  async run({ file, language, prompt, temperature }, call) {
    const fields: MultipartField[] = [
      { name: 'file', filename: file.filename, contentType: file.mediaType, data: file.open, size: file.size },
      { name: 'model_id', value: call.upstreamModel },
      { name: 'timestamps_granularity', value: 'word' },
      { name: 'tag_audio_events', value: 'false' },
    ];
    if (language) fields.push({ name: 'language_code', value: language });
    if (temperature !== null) fields.push({ name: 'temperature', value: String(temperature) });
    if (prompt) call.warn('prompt: not supported by this model, dropped');
    const answer = await call.waitOn(postMultipart({ ...vendorTarget(elevenlabsClient, call.provider, '/speech-to-text'), signal: call.signal }, fields));
    const json = asWire<W.Transcription>(answer.json);
    const words = (json.words ?? [])
      // Scribe times a word's start and end together: a timed word has both.
      .filter((w): w is W.Word & { start: number; end: number } => w.type === 'word' && typeof w.start === 'number')
      .map((w) => ({ word: String(w.text), start: w.start, end: w.end }));
    return {
      transcript: { text: String(json.text ?? ''), language: typeof json.language_code === 'string' ? json.language_code : language, duration: 0, words, segments: null },
      usage: null,
      reportedSeconds: null,
    };
  },
};
