// The pure parts of speech to text (issue 20, first part): the container from its bytes, the
// duration from the container, cues built from words or estimated, and every response format —
// SRT and WebVTT read back with subtitle parsers from npm, verbose_json typed as the OpenAI SDK's.
import { createReadStream, readFileSync } from 'node:fs';
import fc from 'fast-check';
import type { TranscriptionVerbose } from 'openai/resources/audio/transcriptions';
import SrtParser from 'srt-parser-2';
import { describe, expect, it } from 'vitest';
import { WebVTTParser } from 'webvtt-parser';
import { audioDuration } from '../../server/transcription/duration.ts';
import { MEDIA_TYPES, sniffAudio, type AudioFormat } from '../../server/transcription/formats.ts';
import { render } from '../../server/transcription/render.ts';
import { CUE_MAX_CHARS, CUE_MAX_SECONDS, cuesFromWords, estimatedCues, sentences, type Transcript, type Word } from '../../server/transcription/transcript.ts';

const fixture = (name: string) => new URL(`../fixtures/audio/${name}`, import.meta.url);
const FORMATS: AudioFormat[] = ['wav', 'mp3', 'm4a', 'mp4', 'webm', 'mpga', 'mpeg'];
// espeak-ng's "Hello from the gateway. This is a test of speech to text. Goodbye." at 16 kHz: 4.81775 s.
const SECONDS = 4.81775;

describe('containers', () => {
  it.each(FORMATS)('%s is recognised by its bytes, whatever its name', (format) => {
    expect(sniffAudio(readFileSync(fixture(`speech.${format}`)).subarray(0, 12))).toBe(format);
  });

  it('anything else is not audio: text, PNG, an empty file', () => {
    expect(sniffAudio(Buffer.from('Hello, I am a text file renamed to .mp3'))).toBeNull();
    expect(sniffAudio(Buffer.from('89504e470d0a1a0a0000000d', 'hex'))).toBeNull();
    expect(sniffAudio(Buffer.alloc(0))).toBeNull();
    expect(sniffAudio(Buffer.from([0xff, 0xe8]))).toBeNull(); // reserved MPEG version
  });

  it.each(FORMATS.filter((f) => f !== 'mpeg'))('%s: its duration read from the container (streamed)', async (format) => {
    const d = await audioDuration(createReadStream(fixture(`speech.${format}`)), MEDIA_TYPES[format]);
    expect(d).not.toBeNull();
    // Lossy encoders pad the end by up to a frame or two.
    expect(Math.abs(d! - SECONDS)).toBeLessThan(0.12);
  });

  it('an MPEG program stream does not declare its duration: null (the upstream\'s figure is used)', async () => {
    expect(await audioDuration(createReadStream(fixture('speech.mpeg')), MEDIA_TYPES.mpeg)).toBeNull();
  });
});

// OpenAI's recorded whisper-1 words (test/fixtures/recorded/upstreams/vercel+ai/…/openai-transcription.json).
const galileo: Word[] = [
  { word: 'Galileo', start: 0, end: 0.6600000262260437 },
  { word: 'was', start: 0.6600000262260437, end: 0.8999999761581421 },
  { word: 'an', start: 0.8999999761581421, end: 1.1399999856948853 },
  { word: 'American', start: 1.1399999856948853, end: 1.5 },
  { word: 'robotic', start: 1.5, end: 2.0199999809265137 },
];

const words = (text: string, step = 0.3, pauseAfter: Record<number, number> = {}): Word[] => {
  let t = 0;
  return text.split(' ').map((w, i) => {
    const word = { word: w, start: Math.round(t * 1000) / 1000, end: Math.round((t + step - 0.05) * 1000) / 1000 };
    t += step + (pauseAfter[i] ?? 0);
    return word;
  });
};

describe('cues', () => {
  it('from words: a cue ends at a sentence end, before a pause of 0.8 s, at 84 characters or 7 s', () => {
    expect(cuesFromWords(galileo)).toEqual([{ start: 0, end: 2.0199999809265137, text: 'Galileo was an American robotic' }]);
    expect(cuesFromWords(words('Hello there. How are you? Fine'))).toEqual([
      { start: 0, end: 0.55, text: 'Hello there.' },
      { start: 0.6, end: 1.45, text: 'How are you?' },
      { start: 1.5, end: 1.75, text: 'Fine' },
    ]);
    expect(cuesFromWords(words('one two three four', 0.3, { 1: 0.8 })).map((c) => c.text)).toEqual(['one two', 'three four']);
    const long = cuesFromWords(words(Array(40).fill('word').join(' '), 0.1));
    expect(long.map((c) => c.text.length)).toEqual([84, 84, 29]); // 17 + 17 + 6 four-letter words
    const slow = cuesFromWords(words(Array(10).fill('w').join(' '), 1));
    expect(slow.map((c) => [c.start, c.end])).toEqual([[0, 6.95], [7, 9.95]]);
  });

  it('property: cues keep every word in order, within 84 characters and 7 seconds', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.stringMatching(/^[a-z]{1,12}[.,?]?$/), fc.double({ min: 0.05, max: 1.5, noNaN: true })), { minLength: 1, maxLength: 120 }), (spec) => {
        let t = 0;
        const ws = spec.map(([word, len]) => {
          const w = { word, start: t, end: t + len * 0.8 };
          t += len;
          return w;
        });
        const cues = cuesFromWords(ws);
        const back = cues.flatMap((c) => c.text.split(' '));
        return (
          back.join(' ') === ws.map((w) => w.word).join(' ') &&
          cues.every((c) => c.text.length <= CUE_MAX_CHARS || !c.text.includes(' ')) &&
          cues.every((c) => c.end - c.start <= CUE_MAX_SECONDS || !c.text.includes(' '))
        );
      }),
    );
  });

  it('estimated: sentences over the real duration by their length, never word-level', () => {
    expect(sentences('Hello from the gateway. This is a test of speech to text. Goodbye.')).toEqual(['Hello from the gateway.', 'This is a test of speech to text.', 'Goodbye.']);
    // 23 + 33 + 8 = 64 characters over 6.4 s: 0.1 s a character.
    expect(estimatedCues('Hello from the gateway. This is a test of speech to text. Goodbye.', 6.4)).toEqual([
      { start: 0, end: 2.3, text: 'Hello from the gateway.' },
      { start: 2.3, end: 5.6, text: 'This is a test of speech to text.' },
      { start: 5.6, end: 6.4, text: 'Goodbye.' },
    ]);
    expect(sentences(`${'word '.repeat(30)}end.`).every((s) => s.length <= CUE_MAX_CHARS)).toBe(true);
  });
});

const timed: Transcript = { text: 'Hello there. How are you?', language: 'en', duration: 1.5, words: words('Hello there. How are you?'), segments: null };
const untimed: Transcript = { text: 'Hello from the gateway. This is a test of speech to text. Goodbye.', language: 'eng', duration: 6.4, words: null, segments: null };

describe('formats', () => {
  it('srt: numbered cues, HH:MM:SS,mmm, read back by srt-parser-2', () => {
    const r = render(timed, 'srt');
    expect(r).toEqual({
      body: '1\n00:00:00,000 --> 00:00:00,550\nHello there.\n\n2\n00:00:00,600 --> 00:00:01,450\nHow are you?\n',
      contentType: 'application/x-subrip; charset=utf-8',
      estimated: false,
    });
    expect(new SrtParser().fromSrt(r.body)).toEqual([
      { id: '1', startTime: '00:00:00,000', startSeconds: 0, endTime: '00:00:00,550', endSeconds: 0.55, text: 'Hello there.' },
      { id: '2', startTime: '00:00:00,600', startSeconds: 0.6, endTime: '00:00:01,450', endSeconds: 1.45, text: 'How are you?' },
    ]);
  });

  it('vtt: the WEBVTT header, HH:MM:SS.mmm, parsed without errors by the W3C parser; markup escaped', () => {
    const r = render(untimed, 'vtt');
    expect(r.contentType).toBe('text/vtt; charset=utf-8');
    expect(r.estimated).toBe(true);
    const parsed = new WebVTTParser().parse(r.body, 'subtitles');
    expect(parsed.errors).toEqual([]);
    expect(parsed.cues.map((c) => [c.startTime, c.endTime, c.text])).toEqual([
      [0, 2.3, 'Hello from the gateway.'],
      [2.3, 5.6, 'This is a test of speech to text.'],
      [5.6, 6.4, 'Goodbye.'],
    ]);
    const tricky = render({ ...timed, words: [{ word: 'a<b', start: 0, end: 1 }, { word: '-->', start: 1, end: 2 }, { word: '&c', start: 2, end: 3 }] }, 'vtt').body;
    expect(tricky).toBe('WEBVTT\n\n00:00:00.000 --> 00:00:03.000\na&lt;b -> &amp;c\n');
    expect(new WebVTTParser().parse(tricky, 'subtitles').errors).toEqual([]);
  });

  it('verbose_json: OpenAI’s shape (typed by the OpenAI SDK), words only when the upstream timed them, estimated timing marked', () => {
    const v = JSON.parse(render(timed, 'verbose_json', ['word', 'segment']).body) as TranscriptionVerbose;
    expect(v).toEqual({
      task: 'transcribe',
      language: 'english',
      duration: 1.5,
      text: 'Hello there. How are you?',
      segments: [
        { id: 0, seek: 0, start: 0, end: 0.55, text: 'Hello there.', tokens: [], temperature: 0, avg_logprob: 0, compression_ratio: 0, no_speech_prob: 0 },
        { id: 1, seek: 0, start: 0.6, end: 1.45, text: 'How are you?', tokens: [], temperature: 0, avg_logprob: 0, compression_ratio: 0, no_speech_prob: 0 },
      ],
      words: timed.words,
    });
    const e = render(untimed, 'verbose_json', ['word', 'segment']);
    const ev = JSON.parse(e.body) as TranscriptionVerbose & { timing: string };
    expect(ev.language).toBe('english');
    expect(ev.words).toBeUndefined();
    expect(ev.timing).toBe('estimated');
    expect(ev.segments!.map((s) => [s.start, s.end])).toEqual([[0, 2.3], [2.3, 5.6], [5.6, 6.4]]);
    expect(e.estimated).toBe(true);
    expect(JSON.parse(render(timed, 'verbose_json', ['word']).body).segments).toBeUndefined();
  });

  it('json and text', () => {
    expect(render(timed, 'json', undefined, { type: 'duration', seconds: 2 })).toEqual({ body: '{"text":"Hello there. How are you?","usage":{"type":"duration","seconds":2}}', contentType: 'application/json', estimated: false });
    expect(render(untimed, 'text')).toEqual({ body: 'Hello from the gateway. This is a test of speech to text. Goodbye.\n', contentType: 'text/plain; charset=utf-8', estimated: false });
  });
});
