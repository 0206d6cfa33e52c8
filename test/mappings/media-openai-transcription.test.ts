// server/providers/openai/transcription.ts: the upload and options → `POST /audio/transcriptions`
// (multipart; whisper-1 asked for verbose_json with word and segment timestamps, the gpt-4o
// family for json), and the answer → the transcript, token usage or reported seconds. Answers:
// test/fixtures/recorded/upstreams/vercel+ai/packages/openai/src/transcription/__fixtures__/openai-transcription.json
// (recorded whisper-1 verbose_json, words cut to 5 by vercel/ai) and the examples of OpenAI's OpenAPI
// spec (github.com/openai/openai-openapi, `openapi.yaml`, `/audio/transcriptions`), which also
// fill the gaps the recording leaves (token usage, segments).
import { Readable } from 'node:stream';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { openAiTranscription } from '../../server/providers/openai/transcription.ts';
import type { TranscriptionInput } from '../../server/providers/transcription.ts';
import type * as W from '../../server/providers/openai/wire.ts';
import { VERCEL, fixtureJson } from './fixtures.ts';
import { adapterCall, answer, failure, provider, reset, sent, wireForm } from './media-upstream.ts';

vi.mock('../../server/upstream/http.ts', async (importOriginal) => ({ ...(await importOriginal<object>()), ...(await import('./media-upstream.ts')).fakeHttp }));

beforeEach(reset);

/** Recorded whisper-1 verbose_json: language "english", duration, 5 words, usage `{type: "duration", seconds: 37}`. */
const RECORDED = fixtureJson<W.Transcription>(`${VERCEL}openai/src/transcription/__fixtures__/openai-transcription.json`);

const URL = 'https://api.openai.com/v1/audio/transcriptions';
const AUTH = { authorization: 'Bearer test-key' };
const AUDIO = Buffer.from('ID3\u0004\u0000\u0000\u0000\u0000\u0000\u0000 fake mp3 bytes');
const open = () => Readable.from([AUDIO]);
const options = (over: Partial<TranscriptionInput> = {}): TranscriptionInput => ({
  file: { open, size: AUDIO.length, filename: 'speech.mp3', mediaType: 'audio/mpeg' },
  language: null,
  prompt: null,
  temperature: null,
  ...over,
});
const fileField = { name: 'file', filename: 'speech.mp3', contentType: 'audio/mpeg', data: open, size: AUDIO.length };

describe('whisper-1: verbose_json with word and segment timestamps', () => {
  it('the form: file, model, response_format, both granularities, then the options given', async () => {
    const { call } = adapterCall(provider('openai'), 'whisper-1');
    answer({ json: RECORDED });
    await openAiTranscription.run(options({ language: 'en', prompt: 'Galileo, Jupiter', temperature: 0.2 }), call);
    expect(sent).toStrictEqual([
      {
        method: 'POST',
        url: URL,
        headers: AUTH,
        form: [
          fileField,
          { name: 'model', value: 'whisper-1' },
          { name: 'response_format', value: 'verbose_json' },
          { name: 'timestamp_granularities[]', value: 'word' },
          { name: 'timestamp_granularities[]', value: 'segment' },
          { name: 'language', value: 'en' },
          { name: 'prompt', value: 'Galileo, Jupiter' },
          { name: 'temperature', value: '0.2' },
        ],
      },
    ]);
    // As the form reads on the wire: the repeated `timestamp_granularities[]` field of the spec's "Word timestamps" example.
    expect(await wireForm(sent[0]!.form!)).toStrictEqual([
      ['file', { filename: 'speech.mp3', type: 'audio/mpeg', base64: AUDIO.toString('base64') }],
      ['model', 'whisper-1'],
      ['response_format', 'verbose_json'],
      ['timestamp_granularities[]', 'word'],
      ['timestamp_granularities[]', 'segment'],
      ['language', 'en'],
      ['prompt', 'Galileo, Jupiter'],
      ['temperature', '0.2'],
    ]);
  });

  it('the recorded answer: text, language and duration as whisper reports them, the words, 37 reported seconds from its usage', async () => {
    const { call } = adapterCall(provider('openai'), 'whisper-1');
    answer({ json: RECORDED });
    expect(await openAiTranscription.run(options({ language: 'en' }), call)).toStrictEqual({
      transcript: {
        // openai-transcription.json: text, language, duration, words
        text: 'Galileo was an American robotic space program that studied the planet Jupiter and its moons, as well as several other solar system bodies.',
        language: 'english',
        duration: 36.709999084472656,
        words: [
          { word: 'Galileo', start: 0, end: 0.6600000262260437 },
          { word: 'was', start: 0.6600000262260437, end: 0.8999999761581421 },
          { word: 'an', start: 0.8999999761581421, end: 1.1399999856948853 },
          { word: 'American', start: 1.1399999856948853, end: 1.5 },
          { word: 'robotic', start: 1.5, end: 2.0199999809265137 },
        ],
        segments: null,
      },
      usage: null,
      reportedSeconds: 37,
      usageBody: { type: 'duration', seconds: 37 },
    });
  });

  it('segments (spec example "Segment timestamps", its first segment; the spec elides the rest): start, end and text kept, the rest left', async () => {
    const { call } = adapterCall(provider('openai'), 'whisper-1');
    answer({
      json: {
        task: 'transcribe',
        language: 'english',
        duration: 8.470000267028809,
        text: 'The beach was a popular spot on a hot summer day. People were swimming in the ocean, building sandcastles, and playing beach volleyball.',
        segments: [
          {
            id: 0,
            seek: 0,
            start: 0.0,
            end: 3.319999933242798,
            text: ' The beach was a popular spot on a hot summer day.',
            tokens: [50364, 440, 7534, 390, 257, 3743, 4008, 322, 257, 2368, 4266, 786, 13, 50530],
            temperature: 0.0,
            avg_logprob: -0.2860786020755768,
            compression_ratio: 1.2363636493682861,
            no_speech_prob: 0.00985979475080967,
          },
        ],
        usage: { type: 'duration', seconds: 9 },
      },
    });
    expect(await openAiTranscription.run(options(), call)).toStrictEqual({
      transcript: {
        text: 'The beach was a popular spot on a hot summer day. People were swimming in the ocean, building sandcastles, and playing beach volleyball.',
        language: 'english',
        duration: 8.470000267028809,
        words: null,
        segments: [{ start: 0, end: 3.319999933242798, text: ' The beach was a popular spot on a hot summer day.' }],
      },
      usage: null,
      reportedSeconds: 9,
      usageBody: { type: 'duration', seconds: 9 },
    });
  });

  it('an answer without usage (a whisper server that reports none): the duration stands for the reported seconds (the recording, its usage removed)', async () => {
    const { call } = adapterCall(provider('openai-compatible', { base_url: 'http://127.0.0.1:9000/v1' }), 'whisper-large-v3');
    const { usage: _usage, ...withoutUsage } = RECORDED;
    answer({ json: withoutUsage });
    const out = await openAiTranscription.run(options(), call);
    expect({ usage: out.usage, reportedSeconds: out.reportedSeconds, hasUsageBody: 'usageBody' in out, duration: out.transcript.duration }).toStrictEqual({
      usage: null,
      reportedSeconds: 36.709999084472656,
      hasUsageBody: false,
      duration: 36.709999084472656,
    });
    expect(sent[0]!.url).toBe('http://127.0.0.1:9000/v1/audio/transcriptions');
    expect(sent[0]!.form![2]).toStrictEqual({ name: 'response_format', value: 'verbose_json' });
  });
});

describe('gpt-4o-transcribe family: json (text and token usage)', () => {
  it('the form asks json without granularities; temperature 0 is sent, an absent language and prompt are not', async () => {
    const { call } = adapterCall(provider('openai'), 'gpt-4o-transcribe');
    answer({ json: { text: 'x' } });
    await openAiTranscription.run(options({ temperature: 0 }), call);
    expect(sent[0]!.form).toStrictEqual([fileField, { name: 'model', value: 'gpt-4o-transcribe' }, { name: 'response_format', value: 'json' }, { name: 'temperature', value: '0' }]);
  });

  it('spec example "Default": token usage billed instead of minutes; no timing (duration 0, the gateway estimates); the language asked stays', async () => {
    const { call } = adapterCall(provider('openai'), 'gpt-4o-transcribe');
    // openapi.yaml, `/audio/transcriptions` example "Default": the response.
    const usage = { type: 'tokens', input_tokens: 14, input_token_details: { text_tokens: 0, audio_tokens: 14 }, output_tokens: 45, total_tokens: 59 };
    answer({
      json: {
        text: "Imagine the wildest idea that you've ever had, and you're curious about how it might scale to something that's a 100, a 1,000 times bigger. This is a place where you can get to do that.",
        usage,
      },
    });
    expect(await openAiTranscription.run(options({ language: 'en' }), call)).toStrictEqual({
      transcript: {
        text: "Imagine the wildest idea that you've ever had, and you're curious about how it might scale to something that's a 100, a 1,000 times bigger. This is a place where you can get to do that.",
        language: 'en',
        duration: 0,
        words: null,
        segments: null,
      },
      usage: { inputTokens: 14, outputTokens: 45, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, audioInputTokens: 14 },
      reportedSeconds: null,
      usageBody: usage,
    });
  });

  it(
    "the audio share of the input (example \"Default\": input_token_details.audio_tokens 14) is audio input, priced as audio rather than as text",
    async () => {
      const { call } = adapterCall(provider('openai'), 'gpt-4o-transcribe');
      // openapi.yaml, `/audio/transcriptions` example "Default": its usage.
      answer({ json: { text: 'Imagine', usage: { type: 'tokens', input_tokens: 14, input_token_details: { text_tokens: 0, audio_tokens: 14 }, output_tokens: 45, total_tokens: 59 } } });
      expect((await openAiTranscription.run(options(), call)).usage).toStrictEqual({ inputTokens: 14, outputTokens: 45, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, audioInputTokens: 14 });
    },
  );

  it('token usage without output_tokens counts 0 out; a usage of neither kind is passed on but not read', async () => {
    const { call } = adapterCall(provider('openai'), 'gpt-4o-mini-transcribe');
    answer({ json: { text: 'hi', usage: { type: 'tokens', input_tokens: 3 } } }, { json: { text: 'hi', usage: { type: 'characters', characters: 2 } } });
    const first = await openAiTranscription.run(options(), call);
    const second = await openAiTranscription.run(options(), call);
    expect([first.usage, first.reportedSeconds, second.usage, second.reportedSeconds, second.usageBody]).toStrictEqual([
      { inputTokens: 3, outputTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 },
      null,
      null,
      null,
      { type: 'characters', characters: 2 },
    ]);
  });

  it('an empty answer is an empty transcript (no text field: "")', async () => {
    const { call } = adapterCall(provider('openai'), 'gpt-4o-transcribe');
    answer({ json: {} });
    expect(await openAiTranscription.run(options(), call)).toStrictEqual({
      transcript: { text: '', language: null, duration: 0, words: null, segments: null },
      usage: null,
      reportedSeconds: null,
    });
  });
});

describe('failures', () => {
  it('an error answer is the upstream failure, unchanged (OpenAI error envelope; text ours)', async () => {
    const { call } = adapterCall(provider('openai'), 'whisper-1');
    answer({ status: 400, json: { error: { message: 'Invalid file format. Supported formats: flac, m4a, mp3, mp4, mpeg, mpga, oga, ogg, wav, webm', type: 'invalid_request_error', param: null, code: null } } });
    expect(await failure(openAiTranscription.run(options(), call))).toStrictEqual({
      error: 'UpstreamError',
      status: 400,
      code: 'upstream_rejected',
      retryable: false,
      message: "provider 'openai-test': answered HTTP 400: Invalid file format. Supported formats: flac, m4a, mp3, mp4, mpeg, mpga, oga, ogg, wav, webm",
    });
  });
});
