// server/providers/elevenlabs/transcription.ts (Scribe): the upload and options → `POST
// /speech-to-text` (multipart, word timestamps, no audio-event tags), and the answer → the
// transcript's text, language and timed words (spacing and audio events left out). Answers:
// test/fixtures/recorded/upstreams/vercel+ai/packages/elevenlabs/src/__fixtures__/elevenlabs-transcription.json
// (recorded), the example of `SpeechToTextChunkResponseModel` in ElevenLabs' OpenAPI
// (as shipped in github.com/elevenlabs/elevenlabs-python, `.mock/openapi.json`), whose form schema
// (`Body_Speech_to_Text_v1_speech_to_text_post`) names the fields sent.
import { Readable } from 'node:stream';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { elevenLabsTranscription } from '../../server/providers/elevenlabs/transcription.ts';
import type { TranscriptionInput } from '../../server/providers/transcription.ts';
import type * as W from '../../server/providers/elevenlabs/wire.ts';
import { VERCEL, fixtureJson } from './fixtures.ts';
import { adapterCall, answer, failure, provider, reset, sent, wireForm } from './media-upstream.ts';

vi.mock('../../server/upstream/http.ts', async (importOriginal) => ({ ...(await importOriginal<object>()), ...(await import('./media-upstream.ts')).fakeHttp }));

beforeEach(reset);

/** Recorded Scribe answer: "Hello from the Vercel AI SDK.", language_code "eng", 6 words and 5 spacing entries. */
const RECORDED = fixtureJson<W.Transcription>(`${VERCEL}elevenlabs/src/__fixtures__/elevenlabs-transcription.json`);

const URL = 'https://api.elevenlabs.io/v1/speech-to-text';
const KEY = { 'xi-api-key': 'test-key' };
const AUDIO = Buffer.from('RIFF\u0024\u0000\u0000\u0000WAVEfmt fake wav');
const open = () => Readable.from([AUDIO]);
const options = (over: Partial<TranscriptionInput> = {}): TranscriptionInput => ({
  file: { open, size: AUDIO.length, filename: 'hello.wav', mediaType: 'audio/wav' },
  language: null,
  prompt: null,
  temperature: null,
  ...over,
});
const transcribe = (over: Partial<TranscriptionInput> = {}, model = 'scribe_v1') => {
  const { call, warnings } = adapterCall(provider('elevenlabs'), model);
  return { warnings, out: elevenLabsTranscription.run(options(over), call) };
};

describe('the request', () => {
  it('file, model_id, word timestamps, no audio-event tags; language_code and temperature when given', async () => {
    answer({ json: RECORDED });
    const { out, warnings } = transcribe({ language: 'en', temperature: 0.3 });
    await out;
    expect(sent).toStrictEqual([
      {
        method: 'POST',
        url: URL,
        headers: KEY,
        form: [
          { name: 'file', filename: 'hello.wav', contentType: 'audio/wav', data: open, size: AUDIO.length },
          { name: 'model_id', value: 'scribe_v1' },
          { name: 'timestamps_granularity', value: 'word' },
          { name: 'tag_audio_events', value: 'false' },
          { name: 'language_code', value: 'en' },
          { name: 'temperature', value: '0.3' },
        ],
      },
    ]);
    expect(warnings).toStrictEqual([]);
    expect(await wireForm(sent[0]!.form!)).toStrictEqual([
      ['file', { filename: 'hello.wav', type: 'audio/wav', base64: AUDIO.toString('base64') }],
      ['model_id', 'scribe_v1'],
      ['timestamps_granularity', 'word'],
      ['tag_audio_events', 'false'],
      ['language_code', 'en'],
      ['temperature', '0.3'],
    ]);
  });

  it('no language and no temperature: neither sent; temperature 0 is sent; a prompt is dropped with a warning (Scribe takes none)', async () => {
    answer({ json: RECORDED }, { json: RECORDED });
    await transcribe().out;
    const second = transcribe({ temperature: 0, prompt: 'Vercel, SDK' }, 'scribe_v2');
    await second.out;
    expect(sent.map((s) => s.form!.slice(1))).toStrictEqual([
      [
        { name: 'model_id', value: 'scribe_v1' },
        { name: 'timestamps_granularity', value: 'word' },
        { name: 'tag_audio_events', value: 'false' },
      ],
      [
        { name: 'model_id', value: 'scribe_v2' },
        { name: 'timestamps_granularity', value: 'word' },
        { name: 'tag_audio_events', value: 'false' },
        { name: 'temperature', value: '0' },
      ],
    ]);
    expect(second.warnings).toStrictEqual(['prompt: not supported by this model, dropped']);
  });
});

describe('the answer', () => {
  it('the recording: its text, its language code, the six words timed (spacing entries left out); no duration, usage or reported seconds', async () => {
    answer({ json: RECORDED });
    expect(await transcribe({ language: 'en' }).out).toStrictEqual({
      transcript: {
        // elevenlabs-transcription.json: text, language_code, words[type=word]
        text: 'Hello from the Vercel AI SDK.',
        language: 'eng',
        duration: 0,
        words: [
          { word: 'Hello', start: 0.199, end: 0.479 },
          { word: 'from', start: 0.5, end: 0.639 },
          { word: 'the', start: 0.66, end: 0.759 },
          { word: 'Vercel', start: 0.759, end: 1.12 },
          { word: 'AI', start: 1.2, end: 1.519 },
          { word: 'SDK.', start: 1.58, end: 2.479 },
        ],
        segments: null,
      },
      usage: null,
      reportedSeconds: null,
    });
  });

  it('the OpenAPI example of SpeechToTextChunkResponseModel ("Hello world!")', async () => {
    answer({
      json: {
        language_code: 'en',
        language_probability: 0.98,
        text: 'Hello world!',
        words: [
          { end: 0.5, speaker_id: 'speaker_1', start: 0, text: 'Hello', type: 'word' },
          { end: 0.5, speaker_id: 'speaker_1', start: 0.5, text: ' ', type: 'spacing' },
          { end: 1.2, speaker_id: 'speaker_1', start: 0.5, text: 'world!', type: 'word' },
        ],
      },
    });
    expect(await transcribe().out).toStrictEqual({
      transcript: {
        text: 'Hello world!',
        language: 'en',
        duration: 0,
        words: [
          { word: 'Hello', start: 0, end: 0.5 },
          { word: 'world!', start: 0.5, end: 1.2 },
        ],
        segments: null,
      },
      usage: null,
      reportedSeconds: null,
    });
  });

  it('audio events and words without a time (start/end are nullable in SpeechToTextWordResponseModel) are left out', async () => {
    answer({
      json: {
        language_code: 'en',
        text: '(laughter) Hi there',
        words: [
          { text: '(laughter)', type: 'audio_event', start: 0, end: 0.8 },
          { text: ' ', type: 'spacing', start: 0.8, end: 0.9 },
          { text: 'Hi', type: 'word', start: null, end: null },
          { text: ' ', type: 'spacing', start: null, end: null },
          { text: 'there', type: 'word', start: 1.1, end: 1.4 },
        ],
      },
    });
    expect((await transcribe().out).transcript.words).toStrictEqual([{ word: 'there', start: 1.1, end: 1.4 }]);
  });

  it('an answer without words or language: no words, the language asked', async () => {
    answer({ json: { text: 'Hallo' } }, { json: {} });
    expect((await transcribe({ language: 'de' }).out).transcript).toStrictEqual({ text: 'Hallo', language: 'de', duration: 0, words: [], segments: null });
    expect((await transcribe().out).transcript).toStrictEqual({ text: '', language: null, duration: 0, words: [], segments: null });
  });
});

describe('failures', () => {
  it("a 422 HTTPValidationError (its `detail` list; values ours) is the upstream failure, read with ElevenLabs' error reading", async () => {
    answer({ status: 422, json: { detail: [{ loc: ['body', 'model_id'], msg: 'field required', type: 'value_error.missing' }] } });
    expect(await failure(transcribe().out)).toStrictEqual({
      error: 'UpstreamError',
      status: 422,
      code: 'upstream_rejected',
      retryable: false,
      message: `provider 'elevenlabs-test': answered HTTP 422: [{"loc":["body","model_id"],"msg":"field required","type":"value_error.missing"}]`,
    });
  });

  it('a `detail` string (values ours) is the message as it is', async () => {
    answer({ status: 400, json: { detail: 'Audio file is too short.' } });
    expect(await failure(transcribe().out)).toStrictEqual({
      error: 'UpstreamError',
      status: 400,
      code: 'upstream_rejected',
      retryable: false,
      message: "provider 'elevenlabs-test': answered HTTP 400: Audio file is too short.",
    });
  });
});
