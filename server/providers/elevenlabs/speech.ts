// ElevenLabs text to speech, family B: `/text-to-speech/{voice_id}/stream` (MP3, streamed as it
// comes), or `/with-timestamps` (JSON: the audio in base64 and per-character alignment).
import { download, postJson } from '../../upstream/http.ts';
import { extraFields, type SpeechAdapter } from '../speech.ts';
import { vendorTarget } from '../vendor-client.ts';
import { asWire } from '../../upstream/json.ts';
import type * as W from './wire.ts';
import { elevenlabsClient } from './client.ts';

const OUTPUT = 'mp3_44100_128';

/** ElevenLabs' premade voices by name (a provider's `voices` map overrides or adds names). */
export const ELEVENLABS_VOICES: Record<string, string> = {
  alice: 'Xb7hH8MSUJpSbSDYk0k2',
  aria: '9BWtsMINqrJLrRacOk9x',
  bill: 'pqHfZKP75CvOlQylNhV4',
  brian: 'nPczCjzI2devNBz1zQrb',
  callum: 'N2lVS1w4EtoT3dr4eOWO',
  charlie: 'IKne3meq5aSn9XLyUdCD',
  charlotte: 'XB0fDUnXU5powFXDhCwa',
  chris: 'iP95p4xoKVk53GoZ742B',
  daniel: 'onwK4e9ZLuTAKqWW03F9',
  eric: 'cjVigY5qzO86Huf0OWal',
  george: 'JBFqnCBsd6RMkjVDRZzb',
  jessica: 'cgSgspJ2msm6clMCkdW9',
  laura: 'FGY2WhTYpPnrIDTdsKH5',
  liam: 'TX3LPaxmHKxFdv7VOQHJ',
  lily: 'pFZP5JQG7iQjIQuC4Bku',
  matilda: 'XrExE9yKIg1WjnnlVkGX',
  river: 'SAz9YHcvj6GT2YYXdXww',
  sarah: 'EXAVITQu4vr4xnSDxMaL',
  will: 'bIHbv24MWmeRgasZH58o',
};

/** The one character limit (docs/api.md, "Limits on requests"), counted on the text sent, tags included. */
const MAX_CHARACTERS = 4096;

export const elevenLabsSpeech: SpeechAdapter = {
  family: 'B',
  resolveVoice(voice, provider) {
    const names = { ...ELEVENLABS_VOICES, ...Object.fromEntries(Object.entries(provider.voices ?? {}).map(([k, v]) => [k.toLowerCase(), v])) };
    const named = names[voice.toLowerCase()];
    if (named) return named;
    // A voice id of the account (20 characters, as ElevenLabs makes them) goes as it is.
    return /^[A-Za-z0-9]{20}$/.test(voice) ? voice : null;
  },
  voiceNames: (provider) => [...new Set([...Object.keys(ELEVENLABS_VOICES), ...Object.keys(provider.voices ?? {}).map((k) => k.toLowerCase())])],
  // The English v2 models read both alphabets, v3 reads IPA only, the rest none.
  phonemes(upstreamModel) {
    if (/^eleven_(flash|turbo)_v2$/.test(upstreamModel)) return { model: upstreamModel, alphabets: ['ipa', 'cmu-arpabet'] };
    if (/^eleven_v3/.test(upstreamModel)) return { model: upstreamModel, alphabets: ['ipa'] };
    return { model: upstreamModel, alphabets: [] };
  },
  reads: ['stability', 'similarity_boost', 'with-timestamps'],
  maxCharacters: MAX_CHARACTERS,
  async run({ body, text, voice }, call) {
    // ElevenLabs' own fields (language_code, seed, previous_text, ...) pass through.
    const json = {
      ...extraFields(body),
      text,
      model_id: call.upstreamModel,
      voice_settings: { stability: body.stability ?? 0.5, similarity_boost: body.similarity_boost ?? 0.5 },
    };
    const voicePath = `/text-to-speech/${encodeURIComponent(voice)}`;
    if (body['with-timestamps'] === true) {
      const reply = await call.waitOn(postJson({ ...vendorTarget(elevenlabsClient, call.provider, `${voicePath}/with-timestamps?output_format=${OUTPUT}`), body: json, signal: call.signal }));
      const answer = asWire<W.SpeechWithTimestampsAnswer>(reply.json);
      return { kind: 'timestamps', json: { audio_base64: String(answer.audio_base64 ?? ''), alignment: answer.alignment ?? null, normalized_alignment: answer.normalized_alignment ?? null } };
    }
    const res = await call.waitOn(download({ ...vendorTarget(elevenlabsClient, call.provider, `${voicePath}/stream?output_format=${OUTPUT}`), signal: call.signal }, { json }));
    return { kind: 'audio', contentType: 'audio/mpeg', body: res.body, length: res.contentLength };
  },
};
