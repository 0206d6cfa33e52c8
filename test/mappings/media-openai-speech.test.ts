// server/providers/openai/speech.ts (family A): the speech request → `POST /audio/speech` (JSON),
// the audio streamed back with the content type of the format asked. Requests follow the
// examples of OpenAI's OpenAPI spec (github.com/openai/openai-openapi, `openapi.yaml`,
// `/audio/speech` examples "Default" and "SSE Stream Format"); the answer is raw audio bytes
// (application/octet-stream in the spec), no recording of which is in the repository: a few bytes stand in.
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { OPENAI_FORMATS, OPENAI_VOICES, openAiSpeech } from '../../server/providers/openai/speech.ts';
import type { SpeechInput } from '../../server/providers/speech.ts';
import { adapterCall, answer, bytesOf, failure, provider, reset, sent } from './media-upstream.ts';

vi.mock('../../server/upstream/http.ts', async (importOriginal) => ({ ...(await importOriginal<object>()), ...(await import('./media-upstream.ts')).fakeHttp }));

beforeEach(reset);

const URL = 'https://api.openai.com/v1/audio/speech';
const AUTH = { authorization: 'Bearer test-key' };
/** An MP3 frame header and a few bytes: what the upstream streams is passed on untouched. */
const MP3 = Buffer.from([0xff, 0xf3, 0x44, 0xc4, 0x00, 0x00, 0x00, 0x03, 0x48]);
/** openapi.yaml, `/audio/speech` example "Default": the request body. */
const DEFAULT_EXAMPLE = { model: 'gpt-4o-mini-tts', input: 'The quick brown fox jumped over the lazy dog.', voice: 'alloy' };

const input = (body: Partial<SpeechInput['body']> = {}): SpeechInput => ({ body: { ...DEFAULT_EXAMPLE, ...body }, text: DEFAULT_EXAMPLE.input, voice: 'alloy' });

describe('openAiSpeech: what it declares', () => {
  it('family A: reads speed and response_format; no phoneme tags; no character cap of its own', () => {
    expect({ family: openAiSpeech.family, reads: openAiSpeech.reads, phonemes: openAiSpeech.phonemes('tts-1'), maxCharacters: openAiSpeech.maxCharacters }).toStrictEqual({
      family: 'A',
      reads: ['speed', 'response_format'],
      phonemes: { model: 'tts-1', alphabets: [] },
      maxCharacters: undefined,
    });
  });

  it("voices: OpenAI's names, any case, sent lower-case; another family's voice is refused (null)", () => {
    expect(openAiSpeech.voiceNames({})).toStrictEqual(['alloy', 'ash', 'coral', 'echo', 'fable', 'nova', 'onyx', 'sage', 'shimmer']);
    expect(OPENAI_VOICES).toStrictEqual(['alloy', 'ash', 'coral', 'echo', 'fable', 'nova', 'onyx', 'sage', 'shimmer']);
    expect(['alloy', 'Nova', 'SHIMMER', 'Kore', 'JBFqnCBsd6RMkjVDRZzb'].map((v) => openAiSpeech.resolveVoice(v, {}))).toStrictEqual(['alloy', 'nova', 'shimmer', null, null]);
  });

  it('formats and their content types', () => {
    expect(OPENAI_FORMATS).toStrictEqual({ mp3: 'audio/mpeg', opus: 'audio/opus', aac: 'audio/aac', flac: 'audio/flac' });
  });
});

describe('openAiSpeech.run', () => {
  it('spec example "Default": model, input, voice, mp3 asked explicitly; the audio streamed back as audio/mpeg with its length', async () => {
    const { call, warnings } = adapterCall(provider('openai'), 'gpt-4o-mini-tts');
    answer({ bytes: MP3, contentType: 'audio/mpeg' });
    const out = await openAiSpeech.run(input(), call);
    expect(sent).toStrictEqual([
      { method: 'POST', url: URL, headers: AUTH, json: { model: 'gpt-4o-mini-tts', input: 'The quick brown fox jumped over the lazy dog.', voice: 'alloy', response_format: 'mp3' } },
    ]);
    expect({ kind: out.kind, contentType: out.kind === 'audio' ? out.contentType : null, length: out.kind === 'audio' ? out.length : null }).toStrictEqual({ kind: 'audio', contentType: 'audio/mpeg', length: 9 });
    expect(out.kind === 'audio' ? await bytesOf(out.body) : null).toStrictEqual(MP3);
    expect(warnings).toStrictEqual([]);
  });

  it("the routed upstream model, the text as rewritten (pronunciation rules applied) and the resolved voice are sent, not the client's", async () => {
    const { call } = adapterCall(provider('openai'), 'tts-1-hd');
    answer({ bytes: MP3, contentType: 'audio/mpeg' });
    await openAiSpeech.run({ body: { model: 'my-tts', input: 'Hello Madison', voice: 'Nova' }, text: 'Hello Maddison', voice: 'nova' }, call);
    expect(sent[0]!.json).toStrictEqual({ model: 'tts-1-hd', input: 'Hello Maddison', voice: 'nova', response_format: 'mp3' });
  });

  it('speed and response_format are read; opus is answered as audio/opus', async () => {
    const { call } = adapterCall(provider('openai'), 'tts-1');
    answer({ bytes: MP3, contentType: 'audio/ogg' });
    const out = await openAiSpeech.run(input({ speed: 1.25, response_format: 'opus' }), call);
    expect(sent[0]!.json).toStrictEqual({ model: 'tts-1', input: DEFAULT_EXAMPLE.input, voice: 'alloy', response_format: 'opus', speed: 1.25 });
    expect(out.kind === 'audio' ? out.contentType : null).toBe('audio/opus');
  });

  it("OpenAI's own fields pass through (`instructions` of gpt-4o-mini-tts); the gateway's own (pronunciation_dictionary) and other families' (stability) do not", async () => {
    const { call, warnings } = adapterCall(provider('openai'), 'gpt-4o-mini-tts');
    answer({ bytes: MP3, contentType: 'audio/mpeg' });
    await openAiSpeech.run(
      input({
        instructions: 'Speak in a cheerful tone.',
        stability: 0.3,
        similarity_boost: 0.9,
        'with-timestamps': true,
        pronunciation_dictionary: [{ string_to_replace: 'fox', type: 'alias', alias: 'focks', case_sensitive: true, word_boundaries: true }],
      }),
      call,
    );
    expect(sent[0]!.json).toStrictEqual({ instructions: 'Speak in a cheerful tone.', model: 'gpt-4o-mini-tts', input: DEFAULT_EXAMPLE.input, voice: 'alloy', response_format: 'mp3' });
    expect(warnings).toStrictEqual([]);
  });

  it('spec example "SSE Stream Format": stream_format is dropped with a warning (an event stream would not be audio)', async () => {
    const { call, warnings } = adapterCall(provider('openai'), 'gpt-4o-mini-tts');
    answer({ bytes: MP3, contentType: 'audio/mpeg' });
    await openAiSpeech.run(input({ stream_format: 'sse' }), call);
    expect(sent[0]!.json).toStrictEqual({ model: 'gpt-4o-mini-tts', input: DEFAULT_EXAMPLE.input, voice: 'alloy', response_format: 'mp3' });
    expect(warnings).toStrictEqual(['stream_format: the gateway streams the audio itself; dropped']);
  });

  it('an OpenAI-compatible server: its base_url, no key when none is configured', async () => {
    const { call } = adapterCall(provider('openai-compatible', { api_key: undefined, base_url: 'http://127.0.0.1:8880/v1' }), 'kokoro');
    answer({ bytes: MP3, contentType: 'audio/mpeg' });
    await openAiSpeech.run(input(), call);
    expect(sent).toStrictEqual([
      { method: 'POST', url: 'http://127.0.0.1:8880/v1/audio/speech', headers: {}, json: { model: 'kokoro', input: DEFAULT_EXAMPLE.input, voice: 'alloy', response_format: 'mp3' } },
    ]);
  });

  it("an error answer is the upstream failure, unchanged (the spec's 429 TooManyRequests with an ErrorResponse body; text ours)", async () => {
    const { call } = adapterCall(provider('openai'), 'tts-1');
    answer({ status: 429, json: { error: { message: 'Rate limit reached for tts-1.', type: 'requests', param: null, code: 'rate_limit_exceeded' } } });
    expect(await failure(openAiSpeech.run(input(), call))).toStrictEqual({
      error: 'UpstreamError',
      status: 429,
      code: 'upstream_rate_limited',
      retryable: true,
      message: "provider 'openai-test': answered HTTP 429: Rate limit reached for tts-1.",
    });
  });
});
