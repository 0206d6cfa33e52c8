// The three speech families (spec 4.4) by provider type, their voices, and what each does with
// phoneme tags. A: OpenAI-format (`/audio/speech`); B: ElevenLabs; C: Gemini TTS.
import type { ProviderConfig, ProviderType } from '../config/schema.ts';
import type { PhonemeSupport } from './pronunciation.ts';

export type Family = 'A' | 'B' | 'C';

export const familyOf = (type: ProviderType): Family | null =>
  type === 'openai' || type === 'openai-compatible' ? 'A' : type === 'elevenlabs' ? 'B' : type === 'gemini' ? 'C' : null;

export const OPENAI_VOICES = ['alloy', 'ash', 'coral', 'echo', 'fable', 'nova', 'onyx', 'sage', 'shimmer'] as const;
export const GEMINI_VOICES = ['Puck', 'Charon', 'Kore', 'Fenrir', 'Aoede'] as const;

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

/** The voice the upstream is sent (B: a voice id), or null when `voice` is not one of the family's. */
export function resolveVoice(family: Family, voice: string, provider: Pick<ProviderConfig, 'voices'>): string | null {
  const lower = voice.toLowerCase();
  if (family === 'A') return (OPENAI_VOICES as readonly string[]).includes(lower) ? lower : null;
  if (family === 'C') return GEMINI_VOICES.find((v) => v.toLowerCase() === lower) ?? null;
  const names = { ...ELEVENLABS_VOICES, ...Object.fromEntries(Object.entries(provider.voices ?? {}).map(([k, v]) => [k.toLowerCase(), v])) };
  if (names[lower]) return names[lower]!;
  // A voice id of the account (20 characters, as ElevenLabs makes them) goes as it is.
  return /^[A-Za-z0-9]{20}$/.test(voice) ? voice : null;
}

export const voiceNames = (family: Family, provider: Pick<ProviderConfig, 'voices'>): string[] =>
  family === 'A' ? [...OPENAI_VOICES] : family === 'C' ? [...GEMINI_VOICES] : [...new Set([...Object.keys(ELEVENLABS_VOICES), ...Object.keys(provider.voices ?? {}).map((k) => k.toLowerCase())])];

/** Phoneme tags: ElevenLabs' English v2 models read both alphabets, v3 reads IPA only, the rest none. */
export function phonemeSupport(family: Family, upstreamModel: string): PhonemeSupport {
  if (family === 'B' && /^eleven_(flash|turbo)_v2$/.test(upstreamModel)) return { model: upstreamModel, alphabets: ['ipa', 'cmu-arpabet'] };
  if (family === 'B' && /^eleven_v3/.test(upstreamModel)) return { model: upstreamModel, alphabets: ['ipa'] };
  return { model: upstreamModel, alphabets: [] };
}

/** Request fields only one family reads. */
export const FAMILY_FIELDS: Record<string, Family> = { speed: 'A', response_format: 'A', stability: 'B', similarity_boost: 'B', 'with-timestamps': 'B' };

/** Family A's formats and the content type each is answered with. */
export const OPENAI_FORMATS: Record<string, string> = { mp3: 'audio/mpeg', opus: 'audio/opus', aac: 'audio/aac', flac: 'audio/flac' };

/** Family B's one character limit (spec 8), counted on the text sent, tags included. */
export const ELEVENLABS_MAX_CHARACTERS = 4096;
