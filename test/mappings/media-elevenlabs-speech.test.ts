// server/providers/elevenlabs/speech.ts (family B): voice names → voice ids, phoneme support per
// model, and the request → `POST /text-to-speech/{voice_id}/stream` (MP3 streamed back) or
// `/with-timestamps` (JSON: base64 audio and character alignment). Shapes from ElevenLabs' OpenAPI
// document (as shipped in github.com/elevenlabs/elevenlabs-python, `.mock/openapi.json`): the request body schema
// `Body_Text_to_speech_with_timestamps_…`, the `output_format` query parameter, the example of
// `AudioWithTimestampsResponseModel`, and `HTTPValidationError` for 422s. No recorded answer of
// ElevenLabs TTS is available.
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { ELEVENLABS_VOICES, elevenLabsSpeech } from '../../server/providers/elevenlabs/speech.ts';
import type { SpeechInput } from '../../server/providers/speech.ts';
import { adapterCall, answer, bytesOf, failure, provider, reset, sent } from './media-upstream.ts';

vi.mock('../../server/upstream/http.ts', async (importOriginal) => ({ ...(await importOriginal<object>()), ...(await import('./media-upstream.ts')).fakeHttp }));

beforeEach(reset);

const API = 'https://api.elevenlabs.io/v1';
const KEY = { 'xi-api-key': 'test-key' };
const GEORGE = 'JBFqnCBsd6RMkjVDRZzb';
const MP3 = Buffer.from([0xff, 0xfb, 0x90, 0x64, 0x00, 0x0f, 0xf0]);

/** openapi.json, components.schemas.AudioWithTimestampsResponseModel.example. */
const WITH_TIMESTAMPS_EXAMPLE = {
  alignment: { character_end_times_seconds: [0.1, 0.2, 0.3, 0.4, 0.5], character_start_times_seconds: [0, 0.1, 0.2, 0.3, 0.4], characters: ['H', 'e', 'l', 'l', 'o'] },
  audio_base64: 'base64_encoded_audio_string',
  normalized_alignment: { character_end_times_seconds: [0.1, 0.2, 0.3, 0.4, 0.5], character_start_times_seconds: [0, 0.1, 0.2, 0.3, 0.4], characters: ['H', 'e', 'l', 'l', 'o'] },
};

const input = (body: Partial<SpeechInput['body']> = {}, voice = GEORGE): SpeechInput => ({
  body: { model: 'eleven-flash', input: 'Hello', voice: 'george', ...body },
  text: 'Hello',
  voice,
});

describe('voices', () => {
  it("premade names in any case → their ids; an account's 20-character voice id goes as it is; anything else is refused (null)", () => {
    expect(['george', 'George', 'SARAH', 'pNInz6obpgDQGcFmaJgB', 'Rachel', 'alloy', 'short-id'].map((v) => elevenLabsSpeech.resolveVoice(v, {}))).toStrictEqual([
      GEORGE,
      GEORGE,
      'EXAVITQu4vr4xnSDxMaL',
      'pNInz6obpgDQGcFmaJgB',
      null,
      null,
      null,
    ]);
  });

  it("a provider's `voices` add names and override premade ones (matched in any case); voiceNames lists each name once, lower-case", () => {
    const p = { voices: { Narrator: 'abc123', George: 'OverriddenGeorge01' } };
    expect(['narrator', 'NARRATOR', 'george', 'alice'].map((v) => elevenLabsSpeech.resolveVoice(v, p))).toStrictEqual(['abc123', 'abc123', 'OverriddenGeorge01', 'Xb7hH8MSUJpSbSDYk0k2']);
    expect(elevenLabsSpeech.voiceNames(p)).toStrictEqual([...Object.keys(ELEVENLABS_VOICES), 'narrator']);
    expect(elevenLabsSpeech.voiceNames({})).toStrictEqual([
      'alice',
      'aria',
      'bill',
      'brian',
      'callum',
      'charlie',
      'charlotte',
      'chris',
      'daniel',
      'eric',
      'george',
      'jessica',
      'laura',
      'liam',
      'lily',
      'matilda',
      'river',
      'sarah',
      'will',
    ]);
  });
});

describe('what it declares', () => {
  it('family B, 4096 characters, reads stability, similarity_boost and with-timestamps', () => {
    expect({ family: elevenLabsSpeech.family, reads: elevenLabsSpeech.reads, maxCharacters: elevenLabsSpeech.maxCharacters }).toStrictEqual({
      family: 'B',
      reads: ['stability', 'similarity_boost', 'with-timestamps'],
      maxCharacters: 4096,
    });
  });

  it.each([
    ['eleven_flash_v2', ['ipa', 'cmu-arpabet']],
    ['eleven_turbo_v2', ['ipa', 'cmu-arpabet']],
    ['eleven_v3', ['ipa']],
    ['eleven_flash_v2_5', []],
    ['eleven_turbo_v2_5', []],
    ['eleven_multilingual_v2', []],
  ])('phoneme alphabets of %s (docs/pronunciation.md)', (model, alphabets) => {
    expect(elevenLabsSpeech.phonemes(model)).toStrictEqual({ model, alphabets });
  });
});

describe('run: streamed MP3', () => {
  it('POSTs text, model_id and voice settings (0.5 each by default) to /stream with output_format mp3_44100_128; the MP3 comes back as audio/mpeg', async () => {
    const { call, warnings } = adapterCall(provider('elevenlabs'), 'eleven_multilingual_v2');
    answer({ bytes: MP3, contentType: 'audio/mpeg' });
    const out = await elevenLabsSpeech.run(input(), call);
    expect(sent).toStrictEqual([
      {
        method: 'POST',
        url: `${API}/text-to-speech/${GEORGE}/stream?output_format=mp3_44100_128`,
        headers: KEY,
        json: { text: 'Hello', model_id: 'eleven_multilingual_v2', voice_settings: { stability: 0.5, similarity_boost: 0.5 } },
      },
    ]);
    expect(out.kind === 'audio' ? { contentType: out.contentType, length: out.length, bytes: await bytesOf(out.body) } : null).toStrictEqual({ contentType: 'audio/mpeg', length: 7, bytes: MP3 });
    expect(warnings).toStrictEqual([]);
  });

  it("stability and similarity_boost are read; ElevenLabs' own body fields (language_code, seed, previous_text, …) pass through; the gateway's and other families' do not", async () => {
    const { call } = adapterCall(provider('elevenlabs'), 'eleven_flash_v2_5');
    answer({ bytes: MP3, contentType: 'audio/mpeg' });
    await elevenLabsSpeech.run(
      input({ stability: 0.2, similarity_boost: 0.8, language_code: 'de', seed: 7, previous_text: 'Vorher.', apply_text_normalization: 'off', speed: 1.2, response_format: 'opus', pronunciation_dictionary: [] }),
      call,
    );
    expect(sent[0]!.json).toStrictEqual({
      language_code: 'de',
      seed: 7,
      previous_text: 'Vorher.',
      apply_text_normalization: 'off',
      text: 'Hello',
      model_id: 'eleven_flash_v2_5',
      voice_settings: { stability: 0.2, similarity_boost: 0.8 },
    });
  });

  it('the voice id is escaped in the path; a base_url of its own (a proxy)', async () => {
    const { call } = adapterCall(provider('elevenlabs', { base_url: 'https://eu.example.com/v1/' }), 'eleven_v3');
    answer({ bytes: MP3, contentType: 'audio/mpeg' });
    await elevenLabsSpeech.run(input({}, 'a b/c'), call);
    expect(sent[0]!.url).toBe('https://eu.example.com/v1/text-to-speech/a%20b%2Fc/stream?output_format=mp3_44100_128');
  });
});

describe('run: with-timestamps', () => {
  it('POSTs the same body to /with-timestamps; the spec example answer comes back as the timestamps JSON', async () => {
    const { call } = adapterCall(provider('elevenlabs'), 'eleven_flash_v2');
    answer({ json: WITH_TIMESTAMPS_EXAMPLE });
    const out = await elevenLabsSpeech.run(input({ 'with-timestamps': true }), call);
    expect(sent).toStrictEqual([
      {
        method: 'POST',
        url: `${API}/text-to-speech/${GEORGE}/with-timestamps?output_format=mp3_44100_128`,
        headers: KEY,
        json: { text: 'Hello', model_id: 'eleven_flash_v2', voice_settings: { stability: 0.5, similarity_boost: 0.5 } },
      },
    ]);
    expect(out).toStrictEqual({
      kind: 'timestamps',
      json: { audio_base64: 'base64_encoded_audio_string', alignment: WITH_TIMESTAMPS_EXAMPLE.alignment, normalized_alignment: WITH_TIMESTAMPS_EXAMPLE.normalized_alignment },
    });
  });

  it('alignments are nullable in the schema: absent or null → null; `with-timestamps: false` streams', async () => {
    const { call } = adapterCall(provider('elevenlabs'), 'eleven_flash_v2');
    answer({ json: { audio_base64: 'SUQz', alignment: null } }, { bytes: MP3, contentType: 'audio/mpeg' });
    expect(await elevenLabsSpeech.run(input({ 'with-timestamps': true }), call)).toStrictEqual({
      kind: 'timestamps',
      json: { audio_base64: 'SUQz', alignment: null, normalized_alignment: null },
    });
    const out = await elevenLabsSpeech.run(input({ 'with-timestamps': false }), call);
    expect([out.kind, sent[1]!.url]).toStrictEqual(['audio', `${API}/text-to-speech/${GEORGE}/stream?output_format=mp3_44100_128`]);
  });
});

describe('failures', () => {
  it("a 422 (HTTPValidationError: `detail` a list of {loc, msg, type}; values ours) is read with ElevenLabs' error reading", async () => {
    const { call } = adapterCall(provider('elevenlabs'), 'eleven_flash_v2');
    answer({ status: 422, json: { detail: [{ loc: ['body', 'text'], msg: 'field required', type: 'value_error.missing' }] } });
    expect(await failure(elevenLabsSpeech.run(input(), call))).toStrictEqual({
      error: 'UpstreamError',
      status: 422,
      code: 'upstream_rejected',
      retryable: false,
      message: `provider 'elevenlabs-test': answered HTTP 422: [{"loc":["body","text"],"msg":"field required","type":"value_error.missing"}]`,
    });
  });

  it('a `detail` object with status and message (values ours) reads as "message (status)"', async () => {
    const { call } = adapterCall(provider('elevenlabs'), 'eleven_flash_v2');
    answer({ status: 401, json: { detail: { status: 'quota_exceeded', message: 'This request exceeds your quota of 10000.' } } }, { status: 400, json: { detail: { status: 'voice_not_found', message: 'A voice with the voice_id was not found.' } } });
    expect(await failure(elevenLabsSpeech.run(input(), call))).toStrictEqual({
      error: 'UpstreamError',
      status: 401,
      code: 'upstream_error',
      retryable: true,
      message: "provider 'elevenlabs-test': answered HTTP 401: This request exceeds your quota of 10000. (quota_exceeded)",
    });
    expect(await failure(elevenLabsSpeech.run(input({ 'with-timestamps': true }), call))).toStrictEqual({
      error: 'UpstreamError',
      status: 400,
      code: 'upstream_rejected',
      retryable: false,
      message: "provider 'elevenlabs-test': answered HTTP 400: A voice with the voice_id was not found. (voice_not_found)",
    });
  });
});
