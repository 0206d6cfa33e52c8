// The speech capability's adapter types: the text to read (pronunciation rules applied) and the
// resolved voice in, audio out — streamed as it arrives where the upstream streams (OpenAI,
// ElevenLabs), whole where it answers in one piece (Gemini), or ElevenLabs' timestamps JSON.
import type { Readable } from 'node:stream';
import type { z } from 'zod';
import type { SpeechRequest, SpeechWithTimestamps } from '../../contract/audio.ts';
import type { ProviderConfig } from '../config/schema.ts';
import type { PhonemeSupport } from '../speech/pronunciation.ts';
import type { Adapter } from './adapter.ts';

export type SpeechInput = {
  /** The client's body (its vendor-specific fields read by the adapter of that vendor). */
  body: z.infer<typeof SpeechRequest>;
  /** The text to send: pronunciation rules applied, phoneme tags inline where supported. */
  text: string;
  /** The voice as the upstream names it (an ElevenLabs voice id, a Gemini voice name). */
  voice: string;
};

export type SpeechAudio = { kind: 'audio'; contentType: string; body: Readable; length: number | null };
export type SpeechTimestamps = { kind: 'timestamps'; json: Omit<z.infer<typeof SpeechWithTimestamps>, 'pronunciation_warnings'> };

/** The three speech families: A OpenAI-format, B ElevenLabs, C Gemini TTS. */
export type SpeechFamily = 'A' | 'B' | 'C';

/** The request fields one family reads and the others ignore (with a warning). */
export const FAMILY_FIELDS = ['speed', 'response_format', 'stability', 'similarity_boost', 'with-timestamps'] as const;

export type SpeechAdapter = Adapter<SpeechInput, SpeechAudio | SpeechTimestamps> & {
  family: SpeechFamily;
  /** The voice the upstream is sent for the client's `voice`, or null when it is not one of this family's. */
  resolveVoice(voice: string, provider: Pick<ProviderConfig, 'voices'>): string | null;
  /** The voices named when one is refused. */
  voiceNames(provider: Pick<ProviderConfig, 'voices'>): string[];
  /** The phoneme alphabets `upstreamModel` reads inline (none: phoneme rules are skipped with a warning). */
  phonemes(upstreamModel: string): PhonemeSupport;
  /** Which of FAMILY_FIELDS this family reads. */
  reads: readonly (typeof FAMILY_FIELDS)[number][];
  /** Characters one request may carry, counted on the text sent (tags included); none: no cap of the gateway's. */
  maxCharacters?: number;
};

/** No phoneme tags: every phoneme rule is skipped (with a warning). */
export const noPhonemes = (upstreamModel: string): PhonemeSupport => ({ model: upstreamModel, alphabets: [] });

/** The request fields the gateway reads itself; any other field is the client's to pass on (spec: unknown fields pass through). */
const KNOWN = new Set(['model', 'input', 'voice', 'speed', 'response_format', 'stability', 'similarity_boost', 'with-timestamps', 'pronunciation_dictionary']);
export const extraFields = (body: SpeechInput['body']): Record<string, unknown> => Object.fromEntries(Object.entries(body).filter(([k]) => !KNOWN.has(k)));
