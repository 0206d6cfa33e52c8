// server/providers/gemini/speech.ts (family C): the text and voice → `generateContent` with the
// AUDIO modality and a prebuilt voice, and the answer's headerless 16-bit PCM → a WAV file, its
// rate and channels read from the part's mimeType. No recorded answer of Gemini TTS is available:
// answers follow the documented shape of the Gemini API reference: speech generation
// (ai.google.dev/gemini-api/docs/speech-generation), `inlineData` of `audio/L16;codec=pcm;rate=24000` (`{mimeType, data}`)
// with a few PCM samples of ours; Firebase's recorded text answers and error bodies
// (test/fixtures/recorded/upstreams/FirebaseExtended+…) stand for answers without audio.
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { GEMINI_VOICES, geminiSpeech } from '../../server/providers/gemini/speech.ts';
import type { SpeechInput } from '../../server/providers/speech.ts';
import { FIREBASE, fixtureJson } from './fixtures.ts';
import { GEMINI_QUOTA_429, adapterCall, answer, bytesOf, failure, provider, reset, sent } from './media-upstream.ts';

vi.mock('../../server/upstream/http.ts', async (importOriginal) => ({ ...(await importOriginal<object>()), ...(await import('./media-upstream.ts')).fakeHttp }));

beforeEach(reset);

const URL = 'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash-preview-tts:generateContent';
const KEY = { 'x-goog-api-key': 'test-key' };
/** Two 16-bit little-endian samples (0x0102, -2). */
const PCM = Buffer.from([0x02, 0x01, 0xfe, 0xff]);

const input = (body: Partial<SpeechInput['body']> = {}, voice = 'Kore'): SpeechInput => ({
  body: { model: 'gemini-tts', input: 'Say cheerfully: Have a wonderful day!', voice: 'kore', ...body },
  text: 'Say cheerfully: Have a wonderful day!',
  voice,
});
const audioAnswer = (mimeType: string, data: Buffer = PCM) => ({
  json: { candidates: [{ content: { role: 'model', parts: [{ inlineData: { mimeType, data: data.toString('base64') } }] }, finishReason: 'STOP' }] },
});
const speak = async (over: Partial<SpeechInput['body']> = {}) => {
  const { call, warnings } = adapterCall(provider('gemini'), 'gemini-2.5-flash-preview-tts');
  const out = await geminiSpeech.run(input(over), call);
  if (out.kind !== 'audio') throw new Error('expected audio');
  return { contentType: out.contentType, length: out.length, bytes: await bytesOf(out.body), warnings };
};

describe('geminiSpeech: what it declares', () => {
  it('family C: reads none of the other families’ fields, no phoneme tags, no character cap of its own', () => {
    expect({ family: geminiSpeech.family, reads: geminiSpeech.reads, phonemes: geminiSpeech.phonemes('gemini-2.5-pro-preview-tts'), maxCharacters: geminiSpeech.maxCharacters }).toStrictEqual({
      family: 'C',
      reads: [],
      phonemes: { model: 'gemini-2.5-pro-preview-tts', alphabets: [] },
      maxCharacters: undefined,
    });
  });

  it('voices: the prebuilt names, matched in any case and sent as Gemini spells them', () => {
    expect(GEMINI_VOICES).toStrictEqual(['Puck', 'Charon', 'Kore', 'Fenrir', 'Aoede']);
    expect(geminiSpeech.voiceNames({})).toStrictEqual(['Puck', 'Charon', 'Kore', 'Fenrir', 'Aoede']);
    expect(['kore', 'PUCK', 'Aoede', 'alloy', 'Zephyr'].map((v) => geminiSpeech.resolveVoice(v, {}))).toStrictEqual(['Kore', 'Puck', 'Aoede', null, null]);
  });
});

describe('geminiSpeech.run', () => {
  it('the request: the text as the one user part, AUDIO only, the prebuilt voice (Gemini API reference: speech generation)', async () => {
    answer(audioAnswer('audio/L16;codec=pcm;rate=24000'));
    await speak();
    expect(sent).toStrictEqual([
      {
        method: 'POST',
        url: URL,
        headers: KEY,
        json: {
          contents: [{ role: 'user', parts: [{ text: 'Say cheerfully: Have a wonderful day!' }] }],
          generationConfig: { responseModalities: ['AUDIO'], speechConfig: { voiceConfig: { prebuiltVoiceConfig: { voiceName: 'Kore' } } } },
        },
      },
    ]);
  });

  it('`audio/L16;codec=pcm;rate=24000` (the documented answer): 16-bit mono PCM at 24 kHz behind a 44-byte RIFF/WAVE header', async () => {
    answer(audioAnswer('audio/L16;codec=pcm;rate=24000'));
    const header = Buffer.from(
      // RIFF, 36 + 4 | WAVE | "fmt " 16, PCM 1, 1 channel, 24000 Hz, 48000 bytes/s, block 2, 16 bits | data, 4 bytes
      '52494646' + '28000000' + '57415645' + '666d7420' + '10000000' + '0100' + '0100' + 'c05d0000' + '80bb0000' + '0200' + '1000' + '64617461' + '04000000',
      'hex',
    );
    expect(await speak()).toStrictEqual({ contentType: 'audio/wav', length: 48, bytes: Buffer.concat([header, PCM]), warnings: [] });
  });

  it('the rate and channels are read from the type (16 kHz stereo here)', async () => {
    answer(audioAnswer('audio/L16;rate=16000;channels=2'));
    const header = Buffer.from('52494646' + '28000000' + '57415645' + '666d7420' + '10000000' + '0100' + '0200' + '803e0000' + '00fa0000' + '0400' + '1000' + '64617461' + '04000000', 'hex');
    expect(await speak()).toStrictEqual({ contentType: 'audio/wav', length: 48, bytes: Buffer.concat([header, PCM]), warnings: [] });
  });

  it('a type without a rate: 24 kHz mono is assumed', async () => {
    answer(audioAnswer('audio/pcm'));
    const { bytes } = await speak();
    expect([bytes.readUInt16LE(22), bytes.readUInt32LE(24), bytes.subarray(44)]).toStrictEqual([1, 24000, PCM]);
  });

  it('a WAV answer (newer models, as a third party reports, "unverified") is passed on as it is', async () => {
    const wav = Buffer.concat([Buffer.from('RIFF....WAVE', 'latin1'), PCM]);
    answer(audioAnswer('audio/wav', wav));
    expect(await speak()).toStrictEqual({ contentType: 'audio/wav', length: wav.length, bytes: wav, warnings: [] });
  });

  it("fields of the client's body that Gemini has no place for are dropped and named; the other families' fields are not this adapter's to name", async () => {
    answer(audioAnswer('audio/L16;codec=pcm;rate=24000'));
    const { warnings } = await speak({ instructions: 'whisper', language_code: 'de', speed: 1.5, stability: 0.2, pronunciation_dictionary: [] });
    expect(warnings).toStrictEqual(["not supported by this model's provider, dropped: instructions, language_code"]);
    expect((sent[0]!.json as { generationConfig: unknown }).generationConfig).toStrictEqual({
      responseModalities: ['AUDIO'],
      speechConfig: { voiceConfig: { prebuiltVoiceConfig: { voiceName: 'Kore' } } },
    });
  });
});

describe('failures', () => {
  const fail = (over: Partial<SpeechInput['body']> = {}) => failure(speak(over));

  it('a text answer (Firebase googleai/unary-success-basic-reply-short.json) is a provider failure naming its finish reason', async () => {
    answer({ json: fixtureJson(`${FIREBASE}googleai/unary-success-basic-reply-short.json`) });
    expect(await fail()).toStrictEqual({ error: 'UpstreamError', status: 502, code: 'upstream_error', retryable: true, message: "provider 'gemini-test': answered without audio (finishReason STOP)" });
  });

  it('a blocked prompt (Firebase vertexai/unary-failure-prompt-blocked-safety.json) has no candidate: a provider failure too, unlike images where it is a refusal', async () => {
    answer({ json: fixtureJson(`${FIREBASE}vertexai/unary-failure-prompt-blocked-safety.json`) });
    expect(await fail()).toStrictEqual({ error: 'UpstreamError', status: 502, code: 'upstream_error', retryable: true, message: "provider 'gemini-test': answered without audio (finishReason none)" });
  });

  it('an HTTP error (Firebase vertexai/unary-failure-quota-exceeded.json as a 429) is the upstream failure, unchanged', async () => {
    answer({ status: 429, json: fixtureJson(`${FIREBASE}vertexai/unary-failure-quota-exceeded.json`) });
    expect(await fail()).toStrictEqual(GEMINI_QUOTA_429);
  });
});
